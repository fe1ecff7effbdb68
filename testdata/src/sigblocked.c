/*
 * sigblocked: every thread runs with every signal blocked, as a server
 * whose workers leave signals to one thread does (or jemalloc's background
 * thread). Such a thread cannot take a SIGTRAP: an int3 kills the process.
 * Its worker waits until the file named by its argument exists, by system
 * calls of its own (the C library's sleeping functions are traced by
 * default), then calls work 1000 times and prints "calls=1000 sum=S".
 * A profiler killed while it waits must leave no int3 for it to find.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *go_file;
static volatile unsigned long sink;

__attribute__((noinline, noclone, noipa)) unsigned long work(unsigned long i)
{
	sink += i;
	return i * 3 + 1;
}

static void *worker(void *arg)
{
	(void)arg;
	struct timespec ms = {0, 1000000};
	while (syscall(SYS_access, go_file, F_OK) != 0)
		syscall(SYS_nanosleep, &ms, NULL);
	unsigned long sum = 0;
	for (unsigned long i = 0; i < 1000; i++)
		sum += work(i);
	printf("calls=1000 sum=%lu\n", sum);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sigblocked GO-FILE\n");
		return 2;
	}
	go_file = argv[1];
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
