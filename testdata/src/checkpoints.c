/*
 * checkpoints: phases of work, each ending in a call of checkpoint, more
 * than a second apart, for snapshots taken as a function returns.
 *
 *   checkpoints [PHASES [CALLS]]      (default 3 phases, 100 calls)
 *
 *   main -> work x CALLS, checkpoint, sleep 1.1 s      (PHASES times;
 *                                                       no sleep after the last)
 *        -> work x CALLS/2                               (after the last)
 *
 * checkpoint(k) prints "phase k: work N" (N the calls of work so far); at
 * the end "end: work N". Exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRACED __attribute__((noinline, noclone, noipa))

static long calls;

TRACED long work(long x)
{
	calls++;
	return x * 2 + 1;
}

TRACED void checkpoint(int phase)
{
	printf("phase %d: work %ld\n", phase, calls);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int phases = argc > 1 ? atoi(argv[1]) : 3;
	long n = argc > 2 ? atol(argv[2]) : 100;
	long acc = 0;
	struct timespec gap = {1, 100000000};
	for (int k = 1; k <= phases; k++) {
		for (long i = 0; i < n; i++)
			acc = work(acc) & 0xffff;
		checkpoint(k);
		if (k < phases)
			nanosleep(&gap, NULL);
	}
	for (long i = 0; i < n / 2; i++)
		acc = work(acc) & 0xffff;
	printf("end: work %ld\n", calls);
	return acc < 0;
}
