/*
 * splitdebug: static (file-local) functions, which only a symbol table
 * names, for the separate debug file tests: the Makefile strips a copy
 * (splitdebug-stripped) and splits its symbols off into splitdebug.debug,
 * as distributions ship binaries and their -dbg packages.
 *
 *   main -> run(100) -> step(i) -> leaf (twice)
 *                               -> tenth (every 10th i) -> leaf
 *
 * Default run (100 iterations): run 1, step 100, tenth 10, leaf 210.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(run, "run")                                                          \
	X(step, "step")                                                        \
	X(tenth, "tenth")                                                      \
	X(leaf, "leaf")
#include "selfcheck.h"

#define DEFAULT_ITERATIONS 100

static TRACED long leaf(long x)
{
	SC_ENTER(leaf);
	long r = 3 * x + 1;
	SC_LEAVE(leaf);
	return r;
}

static TRACED long tenth(long x)
{
	SC_ENTER(tenth);
	long r = leaf(x / 10);
	SC_LEAVE(tenth);
	return r;
}

static TRACED long step(long i)
{
	SC_ENTER(step);
	long r = leaf(i) + leaf(i + 1);
	if (i % 10 == 0)
		r += tenth(i);
	SC_LEAVE(step);
	return r;
}

static TRACED long run(long iterations)
{
	SC_ENTER(run);
	long total = 0;
	for (long i = 0; i < iterations; i++)
		total += step(i);
	SC_LEAVE(run);
	return total;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long total = run(DEFAULT_ITERATIONS);
	/* leaf(i) + leaf(i+1) = 6i + 5; tenth(i) = 3(i/10) + 1 */
	long want = 0;
	for (long i = 0; i < DEFAULT_ITERATIONS; i++)
		want += 6 * i + 5 + (i % 10 == 0 ? 3 * (i / 10) + 1 : 0);
	int code = 0;
	if (total != want) {
		fprintf(stderr, "splitdebug: wrong result %ld, want %ld\n", total, want);
		code = 1;
	}
	SC_LEAVE(main);
	return sc_finish(code);
}
