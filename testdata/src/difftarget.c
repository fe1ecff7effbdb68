/*
 * difftarget: two runs that differ in one function, for profile diff.
 *
 *   difftarget [--extra]
 *
 *   main -> setup (once)
 *        -> run_rounds -> ROUNDS (20) x { hot, warm, cold }
 *   hot:  WORK / 2 mixing steps, then HOT_HELPS (500) calls of helper;
 *         with --extra also EXTRA x WORK (32 x WORK) more steps (an extra
 *         loop) and EXTRA_HELPS (50) more calls of helper
 *   warm: WORK mixing steps
 *   cold: WORK / 10 mixing steps
 *
 * So --extra changes exactly one function's own work (hot's self time
 * grows sixty-fivefold) and one callee's calls (helper: 10000 -> 11000,
 * all from hot); every other function does the same work and calls in
 * both runs.  Calls of the default run: main 1, setup 1, run_rounds 1,
 * hot 20, warm 20, cold 20, helper 10000 (difftarget.expected.json).
 * stdout is one line "difftarget: extra=E sum=<hex>"; the sum is checked
 * against the known sum of each mode (exit status 1 if it differs): a
 * reference computed in main would add to main's own time, and more so
 * with --extra.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(setup, "setup")                                                      \
	X(run_rounds, "run_rounds")                                            \
	X(hot, "hot")                                                          \
	X(warm, "warm")                                                        \
	X(cold, "cold")                                                        \
	X(helper, "helper")
#include "selfcheck.h"

#define ROUNDS 20
#define WORK 500000L
#define EXTRA 32
#define HOT_HELPS 500
#define EXTRA_HELPS 50

static unsigned long seed;

/* One step of a 64-bit mixer: a dependency chain the compiler cannot
 * shorten, so WORK steps take time proportional to WORK. */
SC_INLINE unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ul;
	x ^= x >> 27;
	return x;
}

SC_INLINE unsigned long spin(unsigned long x, long steps)
{
	for (long i = 0; i < steps; i++) {
		x = mix(x + (unsigned long)i);
		SC_BARRIER();
	}
	return x;
}

TRACED unsigned long helper(unsigned long x)
{
	SC_ENTER(helper);
	unsigned long r = mix(x + 1);
	SC_LEAVE(helper);
	return r;
}

TRACED unsigned long hot(unsigned long x, int extra)
{
	SC_ENTER(hot);
	x = spin(x, WORK / 2);
	if (extra)
		x = spin(x, EXTRA * WORK);
	int helps = HOT_HELPS + (extra ? EXTRA_HELPS : 0);
	for (int i = 0; i < helps; i++)
		x = helper(x);
	SC_LEAVE(hot);
	return x;
}

TRACED unsigned long warm(unsigned long x)
{
	SC_ENTER(warm);
	x = spin(x, WORK);
	SC_LEAVE(warm);
	return x;
}

TRACED unsigned long cold(unsigned long x)
{
	SC_ENTER(cold);
	x = spin(x, WORK / 10);
	SC_LEAVE(cold);
	return x;
}

TRACED unsigned long run_rounds(int extra)
{
	SC_ENTER(run_rounds);
	unsigned long x = seed;
	for (int r = 0; r < ROUNDS; r++) {
		x = hot(x, extra);
		x = warm(x);
		x = cold(x);
	}
	SC_LEAVE(run_rounds);
	return x;
}

TRACED void setup(void)
{
	SC_ENTER(setup);
	seed = 0x9e3779b97f4a7c15ul;
	SC_LEAVE(setup);
}

/* The sums of the two modes, computed once without calls: the mixer is
 * plain 64-bit integer arithmetic, the same on every x86-64 build. */
#define SUM_DEFAULT 0x9b545f46a16ab395ul
#define SUM_EXTRA 0x19b25fe569c819dful

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	int extra = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--extra") == 0) {
			extra = 1;
		} else {
			fprintf(stderr, "usage: difftarget [--extra]\n");
			SC_LEAVE(main);
			return sc_finish(2);
		}
	}
	setup();
	unsigned long sum = run_rounds(extra);
	int ok = sum == (extra ? SUM_EXTRA : SUM_DEFAULT);
	printf("difftarget: extra=%d sum=%016lx\n", extra, sum);
	SC_LEAVE(main);
	return sc_finish(ok ? 0 : 1);
}
