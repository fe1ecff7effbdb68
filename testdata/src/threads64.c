/*
 * threads64: many short-lived threads: 64 threads created and joined per
 * round, 1000 rounds.
 *
 *   threads64 [ROUNDS]                     (default 1000)
 *
 *   main -> round x ROUNDS -> pthread_create x 64  worker, then joins all 64
 *   worker -> work_a x3, work_b x3
 *
 * Counts (default run): main 1, round 1000, worker 64000, work_a 192000,
 * work_b 192000, none recursive.  Threads: 64000, all spawned by round at
 * nesting level 1 (the selfcheck registry counts threads per group, so any
 * number of them is recorded).  At most 64 workers are alive at once; a
 * thread id is reused many times over.  Threads get 64 KiB stacks, which
 * glibc's stack cache keeps for reuse.  Every worker's result depends only
 * on its round and index and is checked against a reference computed
 * without calls; stdout is one line "threads64: rounds=R threads=T
 * sum=<hex>", exit status 1 if any check fails, 2 on bad arguments.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(round, "round")                                                      \
	X(worker, "worker")                                                    \
	X(work_a, "work_a")                                                    \
	X(work_b, "work_b")
#include "selfcheck.h"

#include <pthread.h>

#define NTHREADS 64
#define CALLS 3
#define DEFAULT_ROUNDS 1000
#define STACK_SIZE (64 * 1024)

/* The workers' results in order of round and index (main thread only). */
static unsigned long total;

struct targ {
	struct sc_tinfo ti;
	unsigned long id;
	unsigned long result;
};

SC_INLINE unsigned long a_ref(unsigned long x)
{
	return (x ^ (x >> 33)) * 0xff51afd7ed558ccdul;
}

SC_INLINE unsigned long b_ref(unsigned long x)
{
	return (x ^ (x >> 29)) * 0xc4ceb9fe1a85ec53ul;
}

SC_INLINE unsigned long worker_ref(unsigned long id)
{
	unsigned long h = id;
	for (unsigned long i = 0; i < CALLS; i++)
		h = b_ref(a_ref(h + i) + i);
	return h;
}

TRACED unsigned long work_a(unsigned long x)
{
	SC_ENTER(work_a);
	unsigned long r = a_ref(x);
	SC_LEAVE(work_a);
	return r;
}

TRACED unsigned long work_b(unsigned long x)
{
	SC_ENTER(work_b);
	unsigned long r = b_ref(x);
	SC_LEAVE(work_b);
	return r;
}

TRACED void *worker(void *p)
{
	SC_ENTER(worker);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	unsigned long h = a->id;
	for (unsigned long i = 0; i < CALLS; i++)
		h = work_b(work_a(h + i) + i);
	a->result = h;
	SC_LEAVE(worker);
	return NULL;
}

/* "round" is also a gcc built-in (double round(double)); this one is not. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wbuiltin-declaration-mismatch"
TRACED long round(long r, const pthread_attr_t *attr);
#pragma GCC diagnostic pop

/* One round: start 64 workers, join them; returns how many results were
 * wrong (or -1 if a thread could not be created). */
TRACED long round(long r, const pthread_attr_t *attr)
{
	SC_ENTER(round);
	pthread_t t[NTHREADS];
	struct targ a[NTHREADS];
	long errors = 0;
	int started = 0;
	for (int i = 0; i < NTHREADS; i++) {
		a[i].ti = SC_SPAWN_INFO(round);
		a[i].id = (unsigned long)r * NTHREADS + (unsigned long)i;
		a[i].result = 0;
		int err = pthread_create(&t[i], attr, worker, &a[i]);
		if (err) {
			fprintf(stderr, "threads64: pthread_create: %s\n",
				strerror(err));
			errors = -1;
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		total = total * 31 + a[i].result;
		if (errors >= 0 && a[i].result != worker_ref(a[i].id))
			errors++;
	}
	SC_LEAVE(round);
	return errors;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long rounds = DEFAULT_ROUNDS;
	if (argc > 2) {
		fprintf(stderr, "usage: threads64 [ROUNDS]\n");
		SC_LEAVE(main);
		return 2;
	}
	if (argc == 2) {
		char *end;
		rounds = strtol(argv[1], &end, 10);
		if (argv[1][0] == '\0' || *end != '\0' || rounds < 0) {
			fprintf(stderr, "usage: threads64 [ROUNDS]\n");
			SC_LEAVE(main);
			return 2;
		}
	}

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	long errors = 0;
	for (long r = 0; r < rounds && errors >= 0; r++) {
		long e = round(r, &attr);
		errors = e < 0 ? -1 : errors + e;
	}
	pthread_attr_destroy(&attr);

	unsigned long want = 0;
	for (unsigned long id = 0; id < (unsigned long)rounds * NTHREADS; id++)
		want = want * 31 + worker_ref(id);
	printf("threads64: rounds=%ld threads=%ld sum=%016lx\n", rounds,
	       rounds * NTHREADS, total);
	int code = 0;
	if (errors != 0 || total != want) {
		fprintf(stderr, "threads64: %ld wrong results\n", errors);
		code = 1;
	}
	SC_LEAVE(main);
	return sc_finish(code);
}
