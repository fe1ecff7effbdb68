/*
 * firstcall - functions that begin with a call, which leaves an inline
 * probe no room for its jump before it, nor for the call in place behind
 * one: callfirst (call leaf; ret) and pushcall (push %rbx; call leaf;
 * pop %rbx; ret), assembly.
 *
 *   firstcall N
 *
 * main calls each N times and prints "firstcall: S", S the sum of their
 * results. Counts: main 1, callfirst N, pushcall N, leaf 2N (N from each).
 * Bad arguments: exit 2.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

NOINLINE unsigned long leaf(void)
{
	static unsigned long x = 1;
	x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x >> 33;
}

__asm__(".pushsection .text\n"
	".globl callfirst\n"
	".type callfirst, @function\n"
	".p2align 4\n"
	"callfirst:\n"
	".cfi_startproc\n"
	"\tcall leaf\n"
	"\tret\n"
	".cfi_endproc\n"
	".size callfirst, . - callfirst\n"
	".globl pushcall\n"
	".type pushcall, @function\n"
	".p2align 4\n"
	"pushcall:\n"
	".cfi_startproc\n"
	"\tpushq %rbx\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset rbx, -16\n"
	"\tcall leaf\n"
	"\tpopq %rbx\n"
	".cfi_def_cfa_offset 8\n"
	"\tret\n"
	".cfi_endproc\n"
	".size pushcall, . - pushcall\n"
	".popsection\n");
unsigned long callfirst(void);
unsigned long pushcall(void);

int main(int argc, char **argv)
{
	long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	if (n <= 0) {
		fprintf(stderr, "usage: firstcall N\n");
		return 2;
	}
	unsigned long sum = 0;
	for (long i = 0; i < n; i++)
		sum += callfirst() + pushcall();
	printf("firstcall: %lu\n", sum);
	return 0;
}
