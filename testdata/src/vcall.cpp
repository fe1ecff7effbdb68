/*
 * vcall: virtual calls through small forwarding functions, whose whole
 * body is a virtual tail call (mov (%rdi),%rax; jmp *0x10(%rax)): their
 * first bytes end in an indirect jump.
 *
 *   vcall [CALLS]                          (default 200000)
 *
 *   main -> area_of(Shape const*, long) x CALLS   (forwarder)
 *             -> Square::area(long) const  or  Circle::area(long) const
 *        -> scale_of(Shape const*) x CALLS         (forwarder)
 *             -> Square::scale() const     or  Circle::scale() const
 *
 * The shapes alternate. The forwarders are built with sibling calls (the
 * rest of the workloads are not), so each ends in a jump, not a call: a
 * profile sees area_of and, inside it, the area it tail-called. Counts
 * (default): main 1, area_of 200000, scale_of 200000, each area and scale
 * 100000 (the forwarders are counted at their call sites: a count inside
 * would make them more than a jump). stdout: "vcall: result=<n>", checked
 * against a sum computed without calls (exit 1 if it differs, 2 on bad
 * arguments).
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(area_of, "area_of(Shape const*, long)")                              \
	X(scale_of, "scale_of(Shape const*)")                                  \
	X(sq_area, "Square::area(long) const")                                 \
	X(ci_area, "Circle::area(long) const")                                 \
	X(sq_scale, "Square::scale() const")                                   \
	X(ci_scale, "Circle::scale() const")
#include "selfcheck.h"

#define FORWARDER __attribute__((noinline, noclone, optimize("optimize-sibling-calls")))

struct Shape {
	virtual long scale() const = 0;
	virtual long area(long x) const = 0;
};

struct Square : Shape {
	TRACED long scale() const override
	{
		SC_SCOPE(sq_scale);
		return 2;
	}
	TRACED long area(long x) const override
	{
		SC_SCOPE(sq_area);
		return x * x;
	}
};

struct Circle : Shape {
	TRACED long scale() const override
	{
		SC_SCOPE(ci_scale);
		return 3;
	}
	TRACED long area(long x) const override
	{
		SC_SCOPE(ci_area);
		return 3 * x * x;
	}
};

FORWARDER long area_of(const Shape *s, long x) { return s->area(x); }
FORWARDER long scale_of(const Shape *s) { return s->scale(); }

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long calls = 200000;
	if (argc > 2 || (argc > 1 && (calls = sc_arg(argv[1], 1000000000)) < 0)) {
		fprintf(stderr, "usage: vcall [CALLS]\n");
		SC_LEAVE(main);
		return 2;
	}
	Square sq;
	Circle ci;
	const Shape *shapes[2] = {&sq, &ci};
	long sum = 0, want = 0;
	for (long i = 0; i < calls; i++) {
		const Shape *s = shapes[i & 1];
		long x = i % 100;
		SC_ENTER(area_of);
		SC_ENTER(scale_of);
		sum += area_of(s, x) * scale_of(s);
		SC_LEAVE(scale_of);
		SC_LEAVE(area_of);
		want += (i & 1 ? 3 * x * x : x * x) * (i & 1 ? 3 : 2);
	}
	printf("vcall: result=%ld\n", sum);
	SC_LEAVE(main);
	return sc_finish(sum != want ? 1 : 0);
}
