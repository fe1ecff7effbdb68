/*
 * coldparts: functions whose unlikely paths GCC splits off into
 * "f.cold" parts (built with -freorder-blocks-and-partition, which the
 * other workloads turn off), which they jump to and which jump back.
 *
 *   main -> run -> parse(i) for i = 0..N-1
 *                  parse: every 100th i takes its unlikely path, which
 *                  calls rare(i) and jumps back
 *               -> check(i) for the same i: its unlikely path (never
 *                  taken) calls rare, then abort, which never returns
 *
 *   parse: 5000 calls; rare: 50 calls; check: 5000 calls.
 *
 * coldparts-dynamic is this program stripped to its dynamic symbols
 * (linked with -rdynamic): no symbol names the cold parts there, only
 * their call-frame information bounds them.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(run, "run")                                                          \
	X(parse, "parse")                                                      \
	X(rare, "rare")                                                        \
	X(check, "check")
#include "selfcheck.h"

#define N 5000

volatile int sink;

TRACED __attribute__((cold)) void rare(int i)
{
	SC_ENTER(rare);
	sink += i;
	SC_LEAVE(rare);
}

TRACED int parse(int i)
{
	SC_ENTER(parse);
	int v = i * 3;
	if (__builtin_expect(i % 100 == 99, 0)) {
		rare(i);
		v += sink & 1;
	}
	v ^= i >> 2;
	SC_LEAVE(parse);
	return v;
}

TRACED int check(int i)
{
	SC_ENTER(check);
	if (__builtin_expect(i < 0, 0)) {
		rare(i);
		abort();
	}
	int v = i & 7;
	SC_LEAVE(check);
	return v;
}

TRACED long run(int n)
{
	SC_ENTER(run);
	long sum = 0;
	for (int i = 0; i < n; i++)
		sum += parse(i) + check(i);
	SC_LEAVE(run);
	return sum;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long sum = run(N);
	printf("coldparts: %d values, sum %ld\n", N, sum);
	SC_LEAVE(main);
	return sc_finish(0);
}
