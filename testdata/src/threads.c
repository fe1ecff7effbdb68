/*
 * threads: two levels of thread nesting.
 *
 *   main -> worker                                  (2 calls)
 *   main -> spawn_level1 -> pthread_create x2       -> level1_thread
 *     level1_thread -> worker                       (2 calls each)
 *     level1_thread -> spawn_level2 -> pthread_create x2 -> level2_thread
 *       level2_thread -> sync_point                 (barrier of all 4)
 *       level2_thread -> worker                     (3 calls each)
 *
 * Threads: 2 at level 1 spawned by spawn_level1, 4 at level 2 spawned by
 * spawn_level2.  worker: 2 + 2*2 + 4*3 = 18 calls.  The four level-2
 * threads wait for each other inside sync_point, so they are all inside the
 * same function at once (which is not recursion: stacks are per thread).
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(spawn_level1, "spawn_level1")                                        \
	X(level1_thread, "level1_thread")                                      \
	X(spawn_level2, "spawn_level2")                                        \
	X(level2_thread, "level2_thread")                                      \
	X(sync_point, "sync_point")                                            \
	X(worker, "worker")
#include "selfcheck.h"

#include <pthread.h>

#define FANOUT 2
#define LEVEL2_THREADS (FANOUT * FANOUT)

struct targ {
	struct sc_tinfo ti;
	long id;
	long result;
};

static pthread_barrier_t barrier;

/* The same computation as worker, for checking (inlined, not traced). */
SC_INLINE long worker_ref(long x)
{
	unsigned long h = (unsigned long)x * 2654435761u;
	for (int i = 0; i < 1000; i++)
		h = h * 6364136223846793005ul + 1442695040888963407ul;
	return (long)(h >> 33);
}

TRACED long worker(long x)
{
	SC_ENTER(worker);
	unsigned long h = (unsigned long)x * 2654435761u;
	for (int i = 0; i < 1000; i++) {
		h = h * 6364136223846793005ul + 1442695040888963407ul;
		SC_BARRIER();
	}
	SC_LEAVE(worker);
	return (long)(h >> 33);
}

TRACED void sync_point(void)
{
	SC_ENTER(sync_point);
	pthread_barrier_wait(&barrier);
	SC_LEAVE(sync_point);
}

/* A macro, not a function: only traced functions may be in the binary. */
#define die(what, err)                                                         \
	do {                                                                   \
		fprintf(stderr, "threads: %s: %s\n", what, strerror(err));     \
		exit(1);                                                       \
	} while (0)

TRACED void *level2_thread(void *p)
{
	SC_ENTER(level2_thread);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	sync_point();
	a->result = 0;
	for (int i = 0; i < 3; i++)
		a->result += worker(a->id * 10 + i);
	SC_LEAVE(level2_thread);
	return NULL;
}

TRACED long spawn_level2(long parent_id)
{
	SC_ENTER(spawn_level2);
	pthread_t t[FANOUT];
	struct targ a[FANOUT];
	long sum = 0;
	int err;
	for (int i = 0; i < FANOUT; i++) {
		a[i].ti = SC_SPAWN_INFO(spawn_level2);
		a[i].id = parent_id * FANOUT + i;
		if ((err = pthread_create(&t[i], NULL, level2_thread, &a[i])))
			die("pthread_create", err);
	}
	for (int i = 0; i < FANOUT; i++) {
		pthread_join(t[i], NULL);
		sum += a[i].result;
	}
	SC_LEAVE(spawn_level2);
	return sum;
}

TRACED void *level1_thread(void *p)
{
	SC_ENTER(level1_thread);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	a->result = worker(100 + a->id);
	a->result += spawn_level2(a->id);
	a->result += worker(200 + a->id);
	SC_LEAVE(level1_thread);
	return NULL;
}

TRACED long spawn_level1(void)
{
	SC_ENTER(spawn_level1);
	pthread_t t[FANOUT];
	struct targ a[FANOUT];
	long sum = 0;
	int err;
	for (int i = 0; i < FANOUT; i++) {
		a[i].ti = SC_SPAWN_INFO(spawn_level1);
		a[i].id = i;
		if ((err = pthread_create(&t[i], NULL, level1_thread, &a[i])))
			die("pthread_create", err);
	}
	for (int i = 0; i < FANOUT; i++) {
		pthread_join(t[i], NULL);
		sum += a[i].result;
	}
	SC_LEAVE(spawn_level1);
	return sum;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	int err = pthread_barrier_init(&barrier, NULL, LEVEL2_THREADS);
	if (err)
		die("pthread_barrier_init", err);

	long total = worker(1);
	total += spawn_level1();
	total += worker(2);

	long want = worker_ref(1) + worker_ref(2);
	for (long i = 0; i < FANOUT; i++) {
		want += worker_ref(100 + i) + worker_ref(200 + i);
		for (long j = 0; j < FANOUT; j++)
			for (long k = 0; k < 3; k++)
				want += worker_ref((i * FANOUT + j) * 10 + k);
	}
	printf("threads: %d threads, result=%ld\n", FANOUT + LEVEL2_THREADS,
	       total);
	int code = 0;
	if (total != want) {
		fprintf(stderr, "threads: wrong result %ld, want %ld\n", total,
			want);
		code = 1;
	}
	pthread_barrier_destroy(&barrier);
	SC_LEAVE(main);
	return sc_finish(code);
}
