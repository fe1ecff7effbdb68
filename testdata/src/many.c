/*
 * many: many threads calling traced functions at once, with exact counts.
 *
 *   many [--threads N] [--rounds K]      (default 32 threads, 100 rounds)
 *
 *   main -> spawn_threads -> pthread_create x N  many_thread
 *   many_thread: waits until all N threads run, then K times
 *     step -> leaf, rec(3) (recursing to depth 3)
 *   then waits again, so that all N threads also end together.
 *
 * Calls (default run): main 1, spawn_threads 1, many_thread N = 32,
 * step N*K = 3200, leaf N*K = 3200, rec 4*N*K = 12800 of which 3*N*K = 9600
 * recursive (see many.expected.json).  Every step's result depends only on
 * the thread and the round and is checked against a reference computed
 * without calls; stdout is one line "many: threads=N rounds=K sum=<hex>",
 * exit status 1 if any check fails.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(spawn_threads, "spawn_threads")                                      \
	X(many_thread, "many_thread")                                          \
	X(step, "step")                                                        \
	X(leaf, "leaf")                                                        \
	X(rec, "rec")
#include "selfcheck.h"

#include <pthread.h>

#define MAX_THREADS 256
#define DEPTH 3

struct targ {
	struct sc_tinfo ti;
	long tid;
	long rounds;
	unsigned long sum;
	long errors;
};

static pthread_barrier_t barrier;

SC_INLINE unsigned long leaf_ref(unsigned long x)
{
	return (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ul;
}

SC_INLINE unsigned long step_ref(long tid, long i)
{
	unsigned long x = (unsigned long)tid * 1000003ul + (unsigned long)i;
	unsigned long h = leaf_ref(x);
	for (int d = 0; d <= DEPTH; d++)
		h = h * 31 + (unsigned long)d;
	return h;
}

TRACED unsigned long leaf(unsigned long x)
{
	SC_ENTER(leaf);
	unsigned long r = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ul;
	SC_LEAVE(leaf);
	return r;
}

/* rec(h, d) = rec(h, d-1) * 31 + d, rec(h, 0) = h * 31: folds 0..d in. */
TRACED unsigned long rec(unsigned long h, int d)
{
	SC_ENTER(rec);
	unsigned long r = (d == 0 ? h : rec(h, d - 1)) * 31 + (unsigned long)d;
	SC_LEAVE(rec);
	return r;
}

TRACED unsigned long step(long tid, long i)
{
	SC_ENTER(step);
	unsigned long x = (unsigned long)tid * 1000003ul + (unsigned long)i;
	unsigned long r = rec(leaf(x), DEPTH);
	SC_LEAVE(step);
	return r;
}

TRACED void *many_thread(void *p)
{
	SC_ENTER(many_thread);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	pthread_barrier_wait(&barrier);
	for (long i = 0; i < a->rounds; i++) {
		unsigned long v = step(a->tid, i);
		if (v != step_ref(a->tid, i))
			a->errors++;
		a->sum = a->sum * 1099511628211ul ^ v;
	}
	pthread_barrier_wait(&barrier);
	SC_LEAVE(many_thread);
	return NULL;
}

/* Starts and joins the threads. */
TRACED void spawn_threads(struct targ *a, int n)
{
	SC_ENTER(spawn_threads);
	pthread_t t[MAX_THREADS];
	for (int i = 0; i < n; i++) {
		a[i].ti = SC_SPAWN_INFO(spawn_threads);
		int err = pthread_create(&t[i], NULL, many_thread, &a[i]);
		if (err) {
			/* The barrier would never open: give up at once. */
			fprintf(stderr, "many: pthread_create: %s\n",
				strerror(err));
			exit(1);
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	SC_LEAVE(spawn_threads);
}

#define usage()                                                                \
	do {                                                                   \
		fprintf(stderr, "usage: many [--threads N] [--rounds K]\n");   \
		SC_LEAVE(main);                                                \
		return 2;                                                      \
	} while (0)

static struct targ args[MAX_THREADS];

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long nthreads = 32, rounds = 100;
	{
		const char *const names[] = {"--threads", "--rounds"};
		long *const vals[] = {&nthreads, &rounds};
		if (sc_long_flags(argc, argv, names, vals, 2) != 0)
			usage();
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || rounds < 0)
		usage();

	int n = (int)nthreads;
	int err = pthread_barrier_init(&barrier, NULL, (unsigned)n);
	if (err) {
		fprintf(stderr, "many: pthread_barrier_init: %s\n",
			strerror(err));
		SC_LEAVE(main);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		args[i].tid = i;
		args[i].rounds = rounds;
	}
	spawn_threads(args, n);
	unsigned long sum = 0xcbf29ce484222325ul;
	long errors = 0;
	for (int i = 0; i < n; i++) {
		sum = (sum ^ args[i].sum) * 0x100000001b3ul;
		errors += args[i].errors;
	}
	pthread_barrier_destroy(&barrier);
	printf("many: threads=%d rounds=%ld sum=%016lx\n", n, rounds, sum);
	if (errors) {
		fprintf(stderr, "many: self-check FAILED: %ld errors\n", errors);
		SC_LEAVE(main);
		return sc_finish(1);
	}
	SC_LEAVE(main);
	return sc_finish(0);
}
