/*
 * stuck: a selected call still running when the tracer detaches.
 *
 *   main prints "ready", reads a line on stdin, calls quick 100 times, then
 *   stuck(7, 700), which prints "stuck" and waits for another line before
 *   returning 707; main prints "done SUM" (SUM = 5050 + 707) and exits 0.
 */
#include <stdio.h>

__attribute__((noinline)) long quick(long a)
{
	return a + 1;
}

__attribute__((noinline)) long stuck(long id, long size)
{
	char line[64];
	printf("stuck\n");
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return -1;
	return id + size;
}

int main(void)
{
	char line[64];
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 1;
	long sum = 0;
	for (int i = 0; i < 100; i++)
		sum += quick(i);
	sum += stuck(7, 700);
	printf("done %ld\n", sum);
	return 0;
}
