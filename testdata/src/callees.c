/*
 * callees: a function reached in two calling contexts that calls two
 * functions directly, one through a function pointer and one C library
 * function, for callee discovery (profile discover, record --expand).
 *
 *   callees [ROUNDS]     (default 10)
 *
 *   main -> A -> B -> C          (B calls C twice)
 *        -> D -> C               (D calls C three times)
 *   C -> x, y (twice), z through a volatile function pointer, puts
 *   y -> x
 *
 * Calls for ROUNDS rounds (one A and one D each): A R, B R, D R, C 5R
 * (2R under A>B, 3R under D), x 3R + 2*5R = 15R (5R from C, 10R from y),
 * y 10R, z 5R, puts 5R; for the default 10: A 10, B 10, D 10, C 50,
 * x 150, y 100, z 50, puts 50. The pointer to z is volatile, so the call
 * stays indirect (call through a register or memory) at any optimisation
 * level. stdout: C's puts lines, then "callees: rounds=R sum=S" where S
 * depends only on R. Exit 0.
 */
#include <stdio.h>
#include <stdlib.h>

#define TRACED __attribute__((noinline, noclone, noipa))

static volatile long sink;

TRACED long x(long v)
{
	sink += v;
	return v * 3 + 1;
}

TRACED long y(long v)
{
	return x(v + 7) ^ 0x55;
}

TRACED long z(long v)
{
	sink -= v;
	return v + 11;
}

/* Read at every call: the compiler cannot turn the call into a direct
 * one. */
static long (*volatile zp)(long) = z;

TRACED long C(long v)
{
	long r = x(v);
	r += y(r);
	r += y(v);
	r += zp(r);
	puts("C");
	return r & 0xffff;
}

TRACED long B(long v)
{
	return C(v) + C(v + 1);
}

TRACED long A(long v)
{
	return B(v * 2);
}

TRACED long D(long v)
{
	return C(v) + C(v + 2) + C(v + 4);
}

int main(int argc, char **argv)
{
	long rounds = 10;
	if (argc > 2 || (argc == 2 && (rounds = strtol(argv[1], NULL, 10)) <= 0)) {
		fprintf(stderr, "usage: callees [ROUNDS]\n");
		return 2;
	}
	long sum = 0;
	for (long i = 0; i < rounds; i++) {
		sum += A(i);
		sum += D(i);
	}
	fflush(stdout);
	printf("callees: rounds=%ld sum=%ld\n", rounds, sum);
	return 0;
}
