/*
 * spill - more call sites of one short function than a thread's count
 * table holds (8,192): the counting probe's overflow (--counted leaf).
 * Usage: spill ROUNDS
 *
 * main calls each of a0 ... a9 ROUNDS times; each of them holds 1,200
 * call sites of leaf, each run once a call: 12,000 call sites, leaf
 * called 1,200 x ROUNDS times from each of the ten.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

volatile long sink;

NOINLINE long leaf(long x) { return x + 1; }

#define C1 sink += leaf(x);
#define C10 C1 C1 C1 C1 C1 C1 C1 C1 C1 C1
#define C100 C10 C10 C10 C10 C10 C10 C10 C10 C10 C10
#define C1200 C100 C100 C100 C100 C100 C100 C100 C100 C100 C100 C100 C100
#define CALLER(name) NOINLINE void name(long x) { C1200 }

CALLER(a0) CALLER(a1) CALLER(a2) CALLER(a3) CALLER(a4)
CALLER(a5) CALLER(a6) CALLER(a7) CALLER(a8) CALLER(a9)

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 10;
	for (long r = 0; r < rounds; r++) {
		a0(r); a1(r); a2(r); a3(r); a4(r);
		a5(r); a6(r); a7(r); a8(r); a9(r);
	}
	printf("spill: %ld rounds, sink %ld\n", rounds, (long)sink);
	return 0;
}
