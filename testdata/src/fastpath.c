/*
 * fastpath - short functions called from more call sites than the
 * counting probe's fast path has slots, through a process's life: by
 * main alone, by main and a second thread, by a third thread alone while
 * main waits (three times as long), by a fourth alone (glibc gives it the
 * third's stack and thread pointer), by main alone again (twice as long),
 * by a forked child while main waits, by main alone. Usage: fastpath MS
 * (each phase about MS milliseconds, or as said).
 *
 * leaf is called by sites from six call sites (some on every iteration,
 * some on every second, third, fifth, seventh), and by other; twig by
 * sites. Each thread counts its own calls and prints them when it is done:
 * "calls TID sites>leaf N other>leaf N sites>twig N".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

long base = 1;
volatile long sink;

NOINLINE long leaf(long x) { return x * 3 + base; }

NOINLINE long twig(long x) { return x + 2; }

/* A thread's own counts of the calls below. */
struct counts {
	long sitesLeaf, otherLeaf, sitesTwig;
};

NOINLINE long sites(long i, struct counts *c)
{
	long s = leaf(i) + leaf(i + 1);
	c->sitesLeaf += 2;
	if (i % 2) {
		s += leaf(i + 2);
		c->sitesLeaf++;
	}
	if (i % 3 == 0) {
		s += leaf(i + 3);
		c->sitesLeaf++;
	}
	if (i % 5 == 0) {
		s += leaf(i + 4);
		c->sitesLeaf++;
	}
	if (i % 7 == 0) {
		s += leaf(i + 5);
		c->sitesLeaf++;
	}
	c->sitesTwig++;
	return s + twig(s);
}

NOINLINE long other(long i, struct counts *c)
{
	c->otherLeaf++;
	return leaf(-i);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* run calls for about ms milliseconds, counting into c. */
NOINLINE void run(long ms, struct counts *c)
{
	double end = now() + ms / 1e3;
	long s = 0;
	do {
		for (long i = 0; i < 1000; i++) {
			s += sites(i, c);
			if (i % 4 == 0)
				s += other(i, c);
		}
	} while (now() < end);
	sink += s;
}

static void report(struct counts *c)
{
	printf("calls %ld sites>leaf %ld other>leaf %ld sites>twig %ld\n", (long)syscall(SYS_gettid), c->sitesLeaf, c->otherLeaf, c->sitesTwig);
	fflush(stdout);
}

static long ms;

/* A thread that runs calls for arg times ms. */
NOINLINE void *second(void *arg)
{
	struct counts c = {0};
	run(ms * (long)arg, &c);
	report(&c);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (ms = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: fastpath MS\n");
		return 2;
	}
	struct counts c = {0};
	run(ms, &c);
	pthread_t t;
	pthread_create(&t, NULL, second, (void *)1);
	run(ms, &c);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, second, (void *)3);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, second, (void *)1);
	pthread_join(t, NULL);
	run(2 * ms, &c);
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		struct counts cc = {0};
		run(ms, &cc);
		report(&cc);
		return 0;
	}
	waitpid(child, NULL, 0);
	run(ms, &c);
	report(&c);
	return 0;
}
