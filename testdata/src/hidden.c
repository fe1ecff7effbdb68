/*
 * hidden: a program whose time hides in the callees of one function, for
 * record --auto-expand: work() spends nearly all of it in C library
 * functions, which are not traced by default, so a profile shows it as
 * work's self time until work's callees are traced.
 *
 *   hidden [PHASES [CALLS]]      (default 3 phases, 20000 calls)
 *
 *   main -> phase x PHASES -> work x CALLS -> snprintf (every call)
 *                                          -> strtod (every other call)
 *
 * Phase 1 starts at once; each later phase when a line arrives on stdin
 * (at once at end of input). After each phase, on stdout:
 * "phase P: work W snprintf S strtod T", the calls of that phase alone
 * (W = S = CALLS, T = CALLS/2 rounded up). The wait for stdin blocks in
 * read, a waiting call: it adds no busy time to any function. Exit 0.
 */
#include <stdio.h>
#include <stdlib.h>

#define TRACED __attribute__((noinline, noclone, noipa))

static long works, snprintfs, strtods;
static volatile double sink;

TRACED double work(long i)
{
	char buf[64];
	works++;
	snprintf(buf, sizeof buf, "%.9f", (double)i / 7.0 + 0.123456789);
	snprintfs++;
	double v = 0;
	if (i % 2 == 0) {
		v = strtod(buf, NULL);
		strtods++;
	}
	return v;
}

TRACED void phase(int p, long calls)
{
	works = snprintfs = strtods = 0;
	for (long i = 0; i < calls; i++)
		sink += work(i);
	printf("phase %d: work %ld snprintf %ld strtod %ld\n", p, works, snprintfs, strtods);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int phases = argc > 1 ? atoi(argv[1]) : 3;
	long calls = argc > 2 ? atol(argv[2]) : 20000;
	char line[64];
	for (int p = 1; p <= phases; p++) {
		if (p > 1 && fgets(line, sizeof line, stdin) == NULL)
			clearerr(stdin);
		phase(p, calls);
	}
	return 0;
}
