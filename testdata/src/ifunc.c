/*
 * ifunc: calls into the C library through an IFUNC (memcpy, whose
 * implementation the dynamic linker chose for this CPU) and into its
 * allocator's internals (malloc reaching _int_malloc), single-threaded and
 * the same on every run: the tests count libc's functions from its debug
 * file against gdb's breakpoints on the same run.
 *
 *   main -> run(200) -> copy(i) -> malloc, memcpy (libc)
 *
 * Default run (200 copies): run 1, copy 200. Nothing is printed.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(run, "run")                                                          \
	X(copy, "copy")
#include "selfcheck.h"

#define COPIES 200

static char source[8192];

/* The sizes' step, read at run time: a size the compiler cannot bound
 * keeps memcpy a call (a bounded one it copies inline). */
static volatile size_t step = 37;

/* A size that changes from call to call: the allocations come from many
 * bins. */
TRACED char *copy(long i)
{
	SC_ENTER(copy);
	size_t n = 16 + (size_t)i * step;
	char *p = malloc(n);
	if (p)
		memcpy(p, source, n);
	SC_LEAVE(copy);
	return p;
}

TRACED long run(long copies, char **keep)
{
	SC_ENTER(run);
	long sum = 0;
	for (long i = 0; i < copies; i++) {
		keep[i] = copy(i);
		sum += keep[i] ? keep[i][0] : -1;
	}
	SC_LEAVE(run);
	return sum;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	static char *keep[COPIES];
	long sum = run(COPIES, keep);
	for (int i = 0; i < COPIES; i++)
		free(keep[i]);
	SC_LEAVE(main);
	return sc_finish(sum == 0 ? 0 : 1);
}
