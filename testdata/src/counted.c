/*
 * counted - short functions called from several sites, by several threads
 * and through a function pointer: the counting probe's workload
 * (--counted). Usage: counted ITERATIONS THREADS [SECONDS]
 *
 * Each thread (THREADS more, and main) runs work(ITERATIONS): mid is
 * called ITERATIONS times; mid calls leaf 3 times from its loop and twig
 * once; twig calls leaf once. main also calls leaf ITERATIONS times
 * through a function pointer. With SECONDS, each thread repeats that for
 * about so long (attach tests), and prints its rounds; SIGUSR1 ends
 * that sooner, each thread at the end of its round.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

long base = 1;
volatile long sink;

NOINLINE long leaf(long x) { return x * 3 + base; }

NOINLINE long twig(long x) { return leaf(x) + 2; }

NOINLINE long mid(long x)
{
	long s = 0;
	for (int i = 0; i < 3; i++)
		s += leaf(x + i);
	return s + twig(x);
}

static long iterations;
static double seconds;
/* SIGUSR1, blocked in every thread, is polled at the end of each round. */
static int told_to_stop(void)
{
	sigset_t set;
	return sigpending(&set) == 0 && sigismember(&set, SIGUSR1) == 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE void *work(void *arg)
{
	long s = 0, rounds = 0;
	double end = now() + seconds;
	(void)arg;
	do {
		for (long i = 0; i < iterations; i++)
			s += mid(i);
		rounds++;
	} while (seconds > 0 && now() < end && !told_to_stop());
	sink += s;
	return (void *)rounds;
}

long (*volatile indirect)(long) = leaf;

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: counted ITERATIONS THREADS [SECONDS]\n");
		return 2;
	}
	iterations = atol(argv[1]);
	int threads = atoi(argv[2]);
	if (argc > 3)
		seconds = atof(argv[3]);
	if (threads < 0 || threads > 16)
		return 2;
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	pthread_t t[16];
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, work, NULL);
	long s = 0;
	for (long i = 0; i < iterations; i++)
		s += indirect(i);
	sink += s;
	long rounds = (long)work(NULL);
	for (int i = 0; i < threads; i++) {
		void *r;
		pthread_join(t[i], &r);
		rounds += (long)r;
	}
	printf("rounds %ld\n", rounds);
	return 0;
}
