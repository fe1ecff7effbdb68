/*
 * tailplt - functions that end in a tail jump into the C library through
 * the PLT (built with sibling calls on): sortall (jmp qsort@plt, whose
 * comparator cmp is ours) and grab (jmp malloc@plt).
 *
 *   tailplt ROUNDS
 *
 * Each round main sorts 1,000 pseudo-random ints by sortall and takes and
 * frees a block by grab. It prints "tailplt: R rounds, C compares", C
 * the calls of cmp (its own count). Counts: main 1, sortall R, grab R,
 * cmp C; a stack sampled in cmp shows qsort below it and main below
 * that: sortall's frame is gone. Bad arguments: exit 2.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))
#define N 1000

static long compares;

NOINLINE int cmp(const void *a, const void *b)
{
	compares++;
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

NOINLINE void sortall(int *a, size_t n)
{
	qsort(a, n, sizeof *a, cmp);
}

NOINLINE void *grab(size_t n)
{
	return malloc(n);
}

int main(int argc, char **argv)
{
	char *end;
	long rounds = argc > 1 ? strtol(argv[1], &end, 10) : 100;
	if (argc > 2 || rounds < 0 || (argc > 1 && *end)) {
		fprintf(stderr, "usage: tailplt [ROUNDS]\n");
		return 2;
	}
	static int a[N];
	unsigned x = 1;
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < N; i++)
			a[i] = (int)((x = x * 1103515245u + 12345u) >> 8);
		sortall(a, N);
		free(grab(64 + (size_t)r % 64));
	}
	printf("tailplt: %ld rounds, %ld compares\n", rounds, compares);
	return 0;
}
