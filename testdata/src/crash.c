/*
 * crash: dies with SIGSEGV after a few calls.
 *
 *   main -> prepare x2 -> compute_value x3 each
 *   main -> crash_here          stores through a NULL pointer
 *
 * Counts up to the crash: main 1, prepare 2, compute_value 6, crash_here 1.
 * No --selfcheck (the process dies).  Core dumps are disabled
 * (RLIMIT_CORE = 0) so that running it leaves no core files behind.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(prepare, "prepare")                                                  \
	X(compute_value, "compute_value")                                      \
	X(crash_here, "crash_here")
#include "selfcheck.h"

#include <sys/resource.h>

/* volatile: gcc must not know it is NULL (it would emit a trap instead). */
static long *volatile null_pointer;

TRACED long compute_value(long x)
{
	SC_ENTER(compute_value);
	long r = 3 * x + 1;
	SC_LEAVE(compute_value);
	return r;
}

TRACED long prepare(long base)
{
	SC_ENTER(prepare);
	long sum = 0;
	for (long i = 0; i < 3; i++)
		sum += compute_value(base + i);
	SC_LEAVE(prepare);
	return sum;
}

TRACED void crash_here(long value)
{
	SC_ENTER(crash_here);
	*null_pointer = value; /* SIGSEGV */
	SC_LEAVE(crash_here);
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	/* --core keeps the inherited core limit, for the test that checks a
	 * traced crash still dumps core. */
	if (argc < 2 || strcmp(argv[1], "--core") != 0) {
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
	}
	long v = prepare(0) + prepare(10);
	printf("crash: value=%ld, crashing now\n", v);
	fflush(stdout);
	crash_here(v);
	SC_LEAVE(main);
	return 0;
}
