/*
 * recursion: direct recursion of a known depth.
 *
 *   main -> run(iterations) -> rec(10) -> rec(9) -> ... -> rec(1) -> leaf
 *                           -> leaf
 *
 * Default run (100 iterations): run 1, rec 1000 (900 recursive), leaf 200.
 * "recursion N" runs N iterations (for benchmarks); the expected file
 * describes the default run.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(run, "run")                                                          \
	X(rec, "rec")                                                          \
	X(leaf, "leaf")
#include "selfcheck.h"

#define DEPTH 10
#define DEFAULT_ITERATIONS 100

TRACED long leaf(long x)
{
	SC_ENTER(leaf);
	long r = 2 * x + 1;
	SC_LEAVE(leaf);
	return r;
}

TRACED long rec(int depth)
{
	SC_ENTER(rec);
	long r;
	if (depth <= 1)
		r = leaf(depth);
	else
		r = rec(depth - 1) + depth;
	SC_LEAVE(rec);
	return r;
}

TRACED long run(long iterations)
{
	SC_ENTER(run);
	long total = 0;
	for (long i = 0; i < iterations; i++) {
		total += rec(DEPTH);
		total += leaf(i % 7);
	}
	SC_LEAVE(run);
	return total;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long iterations = DEFAULT_ITERATIONS;
	if (argc > 1) {
		char *end;
		iterations = strtol(argv[1], &end, 10);
		if (*end != '\0' || iterations < 0) {
			fprintf(stderr, "usage: recursion [ITERATIONS]\n");
			SC_LEAVE(main);
			return 2;
		}
	}

	long total = run(iterations);

	/* rec(DEPTH) = leaf(1) + 2 + 3 + ... + DEPTH = 3 + DEPTH*(DEPTH+1)/2 - 1 */
	long want = 0;
	for (long i = 0; i < iterations; i++)
		want += 3 + DEPTH * (DEPTH + 1) / 2 - 1 + 2 * (i % 7) + 1;
	int code = 0;
	printf("recursion: iterations=%ld result=%ld\n", iterations, total);
	if (total != want) {
		fprintf(stderr, "recursion: wrong result %ld, want %ld\n", total,
			want);
		code = 1;
	}
	SC_LEAVE(main);
	return sc_finish(code);
}
