/*
 * longrun: a long-running multi-threaded program to attach to and detach
 * from many times.
 *
 *   longrun [--threads N] [--seconds S]      (default 4 threads, 10 s)
 *
 *   main -> spawn_all -> pthread_create x N  compute_thread
 *                     -> pthread_create x 1  sleeper_thread
 *   compute_thread -> compute_round (repeated until S seconds have passed)
 *     compute_round -> lr_fib (recursive, n = 6..11) x8, lr_mix x8
 *   sleeper_thread -> sleeper x ceil(S/2)    (each sleeps 2 s)
 *
 * Determinism: the number of rounds depends on timing (and on how much a
 * tracer slows the program down), but the result of a round depends only on
 * the thread's index, so every round of a thread must give the same value,
 * which is also checked against a reference computed without calls.  The
 * printed checksum combines, per thread, that round value, and the number
 * of completed 2 s sleeps (ceil(S/2)); it therefore depends only on N and S.
 * Any wrong round, or a sleep that returned early, makes longrun print a
 * message and exit 1.
 *
 * Run time: max(S, 2*ceil(S/2)) seconds untraced; each thread completes at
 * least one round.  Function counts are timing-dependent, so there is no
 * expected file; --selfcheck still reports them.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(spawn_all, "spawn_all")                                              \
	X(compute_thread, "compute_thread")                                    \
	X(compute_round, "compute_round")                                      \
	X(lr_fib, "lr_fib")                                                    \
	X(lr_mix, "lr_mix")                                                    \
	X(sleeper_thread, "sleeper_thread")                                    \
	X(sleeper, "sleeper")
#include "selfcheck.h"

#include <pthread.h>
#include <time.h>

#define MAX_THREADS 256
#define TASKS 8

struct targ {
	struct sc_tinfo ti;
	int tid;
	int sleeps;            /* sleeper: how many 2 s sleeps */
	double deadline;       /* compute: stop starting rounds after this */
	unsigned long value;   /* compute: the round value */
	long rounds;
	long errors;
};

SC_INLINE double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

SC_INLINE long fib_ref(int n)
{
	long a = 0, b = 1;
	for (int i = 0; i < n; i++) {
		long t = a + b;
		a = b;
		b = t;
	}
	return a;
}

SC_INLINE unsigned long mix_ref(unsigned long h, unsigned long v)
{
	h ^= v + 0x9e3779b97f4a7c15ul + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdul;
}

TRACED long lr_fib(int n)
{
	SC_ENTER(lr_fib);
	long r = n < 2 ? n : lr_fib(n - 1) + lr_fib(n - 2);
	SC_LEAVE(lr_fib);
	return r;
}

TRACED unsigned long lr_mix(unsigned long h, unsigned long v)
{
	SC_ENTER(lr_mix);
	h ^= v + 0x9e3779b97f4a7c15ul + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdul;
	SC_LEAVE(lr_mix);
	return h;
}

/* One round; *errors counts lr_fib results that differ from the reference. */
TRACED unsigned long compute_round(int tid, long *errors)
{
	SC_ENTER(compute_round);
	unsigned long h = (unsigned long)tid + 1;
	for (int j = 0; j < TASKS; j++) {
		int n = 6 + (tid + j) % 6;
		long f = lr_fib(n);
		if (f != fib_ref(n))
			(*errors)++;
		h = lr_mix(h, (unsigned long)f * (unsigned long)(j + 1));
	}
	SC_LEAVE(compute_round);
	return h;
}

SC_INLINE unsigned long round_ref(int tid)
{
	unsigned long h = (unsigned long)tid + 1;
	for (int j = 0; j < TASKS; j++) {
		int n = 6 + (tid + j) % 6;
		h = mix_ref(h, (unsigned long)fib_ref(n) * (unsigned long)(j + 1));
	}
	return h;
}

TRACED void *compute_thread(void *p)
{
	SC_ENTER(compute_thread);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	unsigned long want = round_ref(a->tid);
	a->value = want;
	do {
		unsigned long v = compute_round(a->tid, &a->errors);
		if (v != want)
			a->errors++;
		a->rounds++;
	} while (now() < a->deadline);
	SC_LEAVE(compute_thread);
	return NULL;
}

/* Sleep 2 s; returns 1 if at least 2 s passed.  Absolute deadline, so
 * interruptions (EINTR, ptrace stops) neither shorten nor lengthen it. */
TRACED int sleeper(void)
{
	SC_ENTER(sleeper);
	struct timespec start, end, t;
	clock_gettime(CLOCK_MONOTONIC, &start);
	t = start;
	t.tv_sec += 2;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
	clock_gettime(CLOCK_MONOTONIC, &end);
	long long ns = (long long)(end.tv_sec - start.tv_sec) * 1000000000ll +
		       (end.tv_nsec - start.tv_nsec);
	SC_LEAVE(sleeper);
	return ns >= 2000000000ll;
}

TRACED void *sleeper_thread(void *p)
{
	SC_ENTER(sleeper_thread);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	for (int i = 0; i < a->sleeps; i++) {
		if (sleeper())
			a->value++;
		else
			a->errors++;
	}
	SC_LEAVE(sleeper_thread);
	return NULL;
}

/* Starts and joins all threads; a[0..n-1] compute, a[n] sleeps. */
TRACED int spawn_all(struct targ *a, int n)
{
	SC_ENTER(spawn_all);
	pthread_t t[MAX_THREADS + 1];
	int err = 0, started = 0;
	for (int i = 0; i <= n && !err; i++) {
		a[i].ti = SC_SPAWN_INFO(spawn_all);
		err = pthread_create(&t[i], NULL,
				     i < n ? compute_thread : sleeper_thread,
				     &a[i]);
		if (err)
			fprintf(stderr, "longrun: pthread_create: %s\n",
				strerror(err));
		else
			started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	SC_LEAVE(spawn_all);
	return err == 0;
}

#define usage()                                                                \
	do {                                                                   \
		fprintf(stderr, "usage: longrun [--threads N] [--seconds S]\n"); \
		SC_LEAVE(main);                                                \
		return 2;                                                      \
	} while (0)

static struct targ args[MAX_THREADS + 1];

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long nthreads = 4, seconds = 10;
	{
		const char *const names[] = {"--threads", "--seconds"};
		long *const vals[] = {&nthreads, &seconds};
		if (sc_long_flags(argc, argv, names, vals, 2) != 0)
			usage();
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || seconds < 0)
		usage();

	int n = (int)nthreads;
	double deadline = now() + (double)seconds;
	for (int i = 0; i < n; i++) {
		args[i].tid = i;
		args[i].deadline = deadline;
	}
	args[n].sleeps = (int)((seconds + 1) / 2);

	int ok = spawn_all(args, n);

	unsigned long sum = 0xcbf29ce484222325ul;
	long errors = 0;
	for (int i = 0; i <= n; i++) {
		sum = mix_ref(sum, args[i].value);
		errors += args[i].errors;
		if (i < n && args[i].rounds < 1)
			errors++;
	}
	if (!ok || errors) {
		fprintf(stderr, "longrun: self-check FAILED: %ld errors\n",
			errors);
		SC_LEAVE(main);
		return sc_finish(1);
	}
	printf("checksum=%016lx\n", sum);
	SC_LEAVE(main);
	return sc_finish(0);
}
