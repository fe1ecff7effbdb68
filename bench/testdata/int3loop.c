/* Executes N int3 instructions: one ptrace stop each, for the stop floor. */
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	for (long i = 0; i < n; i++)
		__asm__ volatile("int3");
	return 0;
}
