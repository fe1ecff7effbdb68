/* waitwrap: wrap's calls last tens of microseconds, all of it in the
 * nanosleep inside; its own work is a few instructions. burn gives the
 * samplers CPU time to see. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) void wrap(void)
{
	struct timespec ts = {0, 1000};
	nanosleep(&ts, 0);
}

__attribute__((noinline)) void work(int n)
{
	for (int i = 0; i < n; i++)
		wrap();
}

__attribute__((noinline)) void burn(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 1;
	int n = atoi(argv[1]);
	burn(atol(argv[2]));
	work(n);
	printf("done %d\n", n);
	return 0;
}
