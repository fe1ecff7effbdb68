/*
 * inlib: a program whose work is in a shared library it links
 * (libspin.so, spin.c): main -> run -> spin, ROUNDS times (argv[1],
 * default 40), each 2,000,000 mixes.
 */
#include <stdio.h>
#include <stdlib.h>

unsigned long spin(long n);

__attribute__((noinline, noclone, noipa)) static unsigned long run(long rounds)
{
	unsigned long h = 0;
	for (long r = 0; r < rounds; r++)
		h += spin(2000000);
	return h;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 40;
	printf("inlib: %lx\n", run(rounds));
	return 0;
}
