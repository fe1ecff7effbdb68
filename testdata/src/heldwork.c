/*
 * heldwork - worker threads that make a known number of calls per round,
 * each round started by a line on standard input: a profile that leaves
 * out a thread another tracer holds is checked against it.
 *
 *   heldwork THREADS CALLS
 *
 * Once every worker runs it prints "heldwork: tids T1 T2 ..." (the
 * workers' thread ids). For each line read, every worker calls step CALLS
 * times (step calls leaf, and getppid every 64th call: a tracer like
 * strace stops the thread there) and main prints "round R: S", S the sum
 * of the workers' results. A line "spawn" makes the last worker start a
 * spinner thread, which calls step until the end of input, and main
 * prints "spawned TID". At the end of input it stops the threads, prints
 * "heldwork: done" and exits 0. Bad arguments: exit 2.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))
#define MAX_THREADS 16

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static long round_no, finished, running, stopping, calls, nthreads, spawn_req;
static pid_t spawned;
static pthread_t spinner_th;
static volatile int spin_stop;
static unsigned long results[MAX_THREADS];
static pid_t tids[MAX_THREADS];

NOINLINE unsigned long leaf(unsigned long x) { return x * 6364136223846793005ul + 1442695040888963407ul; }

NOINLINE unsigned long step(unsigned long x, long i)
{
	if (i % 64 == 0)
		x += (unsigned long)getppid() * 0;
	return leaf(x);
}

NOINLINE void *spinner(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	spawned = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&done);
	pthread_mutex_unlock(&mu);
	unsigned long x = 1;
	for (long i = 0; !spin_stop; i++)
		x = step(x, i);
	return (void *)x;
}

NOINLINE void *worker(void *arg)
{
	long me = (long)arg, seen = 0;
	pthread_mutex_lock(&mu);
	tids[me] = (pid_t)syscall(SYS_gettid);
	running++;
	pthread_cond_broadcast(&done);
	for (;;) {
		while (round_no == seen && !stopping && !(spawn_req && me == nthreads - 1))
			pthread_cond_wait(&go, &mu);
		if (stopping)
			break;
		if (spawn_req && me == nthreads - 1) {
			spawn_req = 0;
			pthread_create(&spinner_th, NULL, spinner, NULL);
			continue;
		}
		seen = round_no;
		pthread_mutex_unlock(&mu);
		unsigned long x = (unsigned long)me + 1;
		for (long i = 0; i < calls; i++)
			x = step(x, i);
		pthread_mutex_lock(&mu);
		results[me] = x;
		finished++;
		pthread_cond_broadcast(&done);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return fprintf(stderr, "usage: heldwork THREADS CALLS\n"), 2;
	long threads = nthreads = atol(argv[1]);
	calls = atol(argv[2]);
	if (threads < 1 || threads > MAX_THREADS || calls < 1)
		return fprintf(stderr, "heldwork: bad arguments\n"), 2;
	pthread_t th[MAX_THREADS];
	for (long i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	pthread_mutex_lock(&mu);
	while (running < threads)
		pthread_cond_wait(&done, &mu);
	printf("heldwork: tids");
	for (long i = 0; i < threads; i++)
		printf(" %d", (int)tids[i]);
	printf("\n");
	fflush(stdout);
	pthread_mutex_unlock(&mu);
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		pthread_mutex_lock(&mu);
		if (strcmp(line, "spawn\n") == 0 && !spawned) {
			spawn_req = 1;
			pthread_cond_broadcast(&go);
			while (!spawned)
				pthread_cond_wait(&done, &mu);
			printf("spawned %d\n", (int)spawned);
			fflush(stdout);
			pthread_mutex_unlock(&mu);
			continue;
		}
		finished = 0;
		round_no++;
		pthread_cond_broadcast(&go);
		while (finished < threads)
			pthread_cond_wait(&done, &mu);
		unsigned long sum = 0;
		for (long i = 0; i < threads; i++)
			sum += results[i];
		printf("round %ld: %lu\n", round_no, sum);
		fflush(stdout);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	stopping = 1;
	pthread_cond_broadcast(&go);
	pthread_mutex_unlock(&mu);
	for (long i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	spin_stop = 1;
	if (spawned)
		pthread_join(spinner_th, NULL);
	printf("heldwork: done\n");
	return 0;
}
