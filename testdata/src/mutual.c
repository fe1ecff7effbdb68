/*
 * mutual: indirect recursion through two functions.
 *
 *   main -> run -> is_even(n) -> is_odd(n-1) -> is_even(n-2) -> ... -> 0
 *
 * run calls is_even(n) for n = 0..19.  is_even(n) makes n/2+1 calls of
 * is_even and (n+1)/2 calls of is_odd (integer division); all but the first
 * activation of each function in a chain are recursive.
 *   is_even: 110 calls, 90 recursive  (sum n/2+1; minus 20 chain heads)
 *   is_odd:  100 calls, 81 recursive  (sum (n+1)/2; minus 19 chain heads)
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(run, "run")                                                          \
	X(is_even, "is_even")                                                  \
	X(is_odd, "is_odd")
#include "selfcheck.h"

#define N 20

int is_odd(int n);

TRACED int is_even(int n)
{
	SC_ENTER(is_even);
	int r = n == 0 ? 1 : is_odd(n - 1);
	SC_LEAVE(is_even);
	return r;
}

TRACED int is_odd(int n)
{
	SC_ENTER(is_odd);
	int r = n == 0 ? 0 : is_even(n - 1);
	SC_LEAVE(is_odd);
	return r;
}

TRACED int run(int n)
{
	SC_ENTER(run);
	int wrong = 0;
	for (int i = 0; i < n; i++)
		if (is_even(i) != (i % 2 == 0))
			wrong++;
	SC_LEAVE(run);
	return wrong;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	int wrong = run(N);
	printf("mutual: %d numbers, %d wrong\n", N, wrong);
	SC_LEAVE(main);
	return sc_finish(wrong ? 1 : 0);
}
