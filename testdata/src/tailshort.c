/*
 * tailshort - a short function ending in a tail jump to a long one: the
 * adaptive probes' tail-call workload. Usage: tailshort CALLS
 *
 * main calls forward CALLS times; forward mixes its argument in a few
 * steps and ends in a tail jump to work,
 * which runs a 3,000-step multiply chain: some microseconds. forward's
 * own calls last nanoseconds, work's microseconds. It prints the sum of
 * the results, which depends only on CALLS.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

NOINLINE long work(long x)
{
	for (int i = 0; i < 3000; i++)
		x = x * 6364136223846793005L + 1442695040888963407L;
	return x;
}

/* forward(x) = work(x ^ x >> 7), written in assembly so that it ends in
 * a tail jump whatever the compiler and its flags: a 5-byte one, which
 * an exit probe can take over. */
long forward(long x);
__asm__(".text\n"
	".globl forward\n"
	".type forward, @function\n"
	"forward:\n"
	"\t.cfi_startproc\n"
	"\tmov %rdi, %rax\n"
	"\tsar $7, %rdi\n"
	"\txor %rax, %rdi\n"
	"\t.byte 0xe9\n"
	"\t.long work - . - 4\n"
	"\t.cfi_endproc\n"
	".size forward, .-forward\n");

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 20000;
	unsigned long sum = 0;
	for (long i = 0; i < calls; i++)
		sum += (unsigned long)forward(i);
	printf("tailshort: %ld calls, sum %lx\n", calls, sum);
	return 0;
}
