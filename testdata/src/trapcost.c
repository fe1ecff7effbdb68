/*
 * trapcost: what breakpoints cost the times, and where they may sit.
 *
 *   trapcost [CALLS [STEPS]]           (defaults 10000, 40000)
 *
 *   main -> step x CALLS            (STEPS dependent multiply-adds each)
 *        -> leaf x CALLS            (a few instructions)
 *        -> tail_to_loop x CALLS/10 -> (tail call) loop_head
 *
 * loop_head is assembly whose loop branches back into its first 5 bytes
 * (as unpatchable's spin_back): it cannot take an inline probe and gets a
 * breakpoint under --probes auto. tail_to_loop is assembly too, with an
 * ordinary first 5 bytes (an inline probe fits) and a tail call, `jmp
 * loop_head`: loop_head then finds the inline probes' return stub as its
 * return address. A profiler that puts a return breakpoint there stops at
 * every inline-probed return of the process (leaf's too).
 *
 *   +0 tail_to_loop: 83 c7 00  add $0,%edi   (5 bytes of plain code)
 *   +3               31 c9     xor %ecx,%ecx
 *   +5               e9 ..     jmp loop_head
 *
 *   loop_head:       31 c0     xor %eax,%eax
 *                 1: 83 c0 01  add $1,%eax   <- loop target, inside 0..4
 *                    39 f8     cmp %edi,%eax
 *                    7c f9     jl 1b
 *                    c3        ret
 *
 * loop_head(n) returns max(n, 1). Counts (defaults): main 1, step 10000,
 * leaf 10000, tail_to_loop 1000, loop_head 1000 (counted at the call
 * site: the selfcheck macros cannot go inside assembly). stdout is
 * "trapcost: calls=C step_ns=T result=<hex>": T is the time of the step
 * calls as the program measures it around each call (clock_gettime), to
 * compare a profile's times with; the result is checked against a
 * reference computed without calls (exit 1 if it differs, 2 on bad
 * arguments).
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(step, "step")                                                        \
	X(leaf, "leaf")                                                        \
	X(tail_to_loop, "tail_to_loop")                                        \
	X(loop_head, "loop_head")
#include "selfcheck.h"

#include <time.h>

#define DEFAULT_CALLS 10000
#define DEFAULT_STEPS 40000
#define TAIL_EVERY 10

__asm__(".pushsection .text\n"
	".globl loop_head\n"
	".type loop_head, @function\n"
	".p2align 4\n"
	"loop_head:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"
	"1:\n"
	"\taddl $1, %eax\n"
	"\tcmpl %edi, %eax\n"
	"\tjl 1b\n"
	"\tret\n"
	".cfi_endproc\n"
	".size loop_head, . - loop_head\n"
	".globl tail_to_loop\n"
	".type tail_to_loop, @function\n"
	".p2align 4\n"
	"tail_to_loop:\n"
	".cfi_startproc\n"
	"\taddl $0, %edi\n"
	"\txorl %ecx, %ecx\n"
	"\tjmp loop_head\n"
	".cfi_endproc\n"
	".size tail_to_loop, . - tail_to_loop\n"
	".popsection\n");
int loop_head(int n);
int tail_to_loop(int n);

SC_INLINE long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* steps dependent multiply-adds: a compiler cannot shorten the chain. */
SC_INLINE unsigned long chain(unsigned long x, long steps)
{
	for (long i = 0; i < steps; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		SC_BARRIER();
	}
	return x;
}

TRACED unsigned long step(unsigned long x, long steps)
{
	SC_ENTER(step);
	x = chain(x, steps);
	SC_LEAVE(step);
	return x;
}

TRACED unsigned long leaf(unsigned long x)
{
	SC_ENTER(leaf);
	x ^= x >> 7;
	SC_LEAVE(leaf);
	return x;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long calls = DEFAULT_CALLS, steps = DEFAULT_STEPS;
	if (argc > 3 || (argc > 1 && (calls = sc_arg(argv[1], 1000000000)) < 0) ||
	    (argc > 2 && (steps = sc_arg(argv[2], 1000000000)) < 0)) {
		fprintf(stderr, "usage: trapcost [CALLS [STEPS]]\n");
		SC_LEAVE(main);
		return 2;
	}
	unsigned long x = 1, want = 1, sum = 0, wantsum = 0;
	long long took = 0;
	for (long i = 0; i < calls; i++) {
		long long t0 = now_ns();
		x = step(x, steps);
		took += now_ns() - t0;
		want = chain(want, steps);
		sum += leaf(x);
		wantsum += x ^ (x >> 7);
		if (i % TAIL_EVERY == 0) {
			/* Both assembly: count them here. */
			SC_ENTER(tail_to_loop);
			SC_ENTER(loop_head);
			sum += (unsigned long)tail_to_loop((int)(i % 100));
			SC_LEAVE(loop_head);
			SC_LEAVE(tail_to_loop);
			wantsum += (unsigned long)(i % 100 > 1 ? i % 100 : 1);
		}
	}
	int bad = x != want || sum != wantsum;
	printf("trapcost: calls=%ld step_ns=%lld result=%lx\n", calls, took, sum ^ x);
	SC_LEAVE(main);
	return sc_finish(bad ? 1 : 0);
}
