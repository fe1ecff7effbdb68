/*
 * exec_target: a small program that forks execs (see forks.c); it also
 * runs on its own.
 *
 *   main -> target_run -> target_rec(5) x2 -> target_rec(4) -> ... (1)
 *                      -> target_leaf x3
 *
 * target_run 1, target_rec 10 (8 recursive), target_leaf 3.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(target_run, "target_run")                                            \
	X(target_rec, "target_rec")                                            \
	X(target_leaf, "target_leaf")
#include "selfcheck.h"

TRACED long target_rec(int depth)
{
	SC_ENTER(target_rec);
	long r = depth <= 1 ? 1 : 2 * target_rec(depth - 1);
	SC_LEAVE(target_rec);
	return r;
}

TRACED long target_leaf(long x)
{
	SC_ENTER(target_leaf);
	long r = x * x + 1;
	SC_LEAVE(target_leaf);
	return r;
}

TRACED long target_run(void)
{
	SC_ENTER(target_run);
	long sum = 0;
	for (int i = 0; i < 2; i++)
		sum += target_rec(5);
	for (int i = 0; i < 3; i++)
		sum += target_leaf(i);
	SC_LEAVE(target_run);
	return sum;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long sum = target_run();
	/* 2 * 16 + (1 + 2 + 5) */
	int code = sum == 40 ? 0 : 1;
	printf("exec_target: result=%ld\n", sum);
	if (code)
		fprintf(stderr, "exec_target: wrong result %ld, want 40\n", sum);
	SC_LEAVE(main);
	return sc_finish(code);
}
