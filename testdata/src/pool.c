/*
 * pool: a server's thread pool sitting idle while one thread computes, for
 * busy time against wall time (render --scope busy|wall): the workers'
 * time goes to pthread_cond_wait, the main thread's to crunch.
 *
 *   pool [--workers N] [--rounds R]          (defaults 4 and 40)
 *
 *   main -> start_pool -> pthread_create x N   pool_worker (level 1)
 *     pool_worker -> next_task: waits on a condition variable for a task
 *                    or the shutdown; -> handle_task for each task it gets
 *   main -> crunch x R: a fixed loop (a few ms each), while the pool waits
 *   main -> post_tasks: N tasks, then -> stop_pool: shutdown, join
 *
 * Counts (default run): main 1, start_pool 1, pool_worker N, next_task 2N
 * (one per task, one per worker for the shutdown, whichever worker takes
 * which task), handle_task N, crunch R, post_tasks 1, stop_pool 1; none
 * recursive.  Threads: N spawned by start_pool, level 1.
 *
 * stdout: "pool: workers=N rounds=R handled=N result=<16 hex digits>",
 * the same on every run.  Exit 0, 2 on bad arguments.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(start_pool, "start_pool")                                            \
	X(pool_worker, "pool_worker")                                          \
	X(next_task, "next_task")                                              \
	X(handle_task, "handle_task")                                          \
	X(crunch, "crunch")                                                    \
	X(post_tasks, "post_tasks")                                            \
	X(stop_pool, "stop_pool")
#include "selfcheck.h"

#include <pthread.h>

#define MAX_WORKERS 64
#define CRUNCH_STEPS 2000000L

#define die(what, err)                                                         \
	do {                                                                   \
		fprintf(stderr, "pool: %s: %s\n", what, strerror(err));        \
		exit(1);                                                       \
	} while (0)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long queued;   /* tasks posted and not yet taken */
static long next_arg; /* the argument of the next task */
static int shutdown_pool;
static unsigned long handled_sum; /* under mu */
static long handled;

struct targ {
	struct sc_tinfo ti;
};

/* Waits for a task: returns its argument, or -1 at shutdown. */
TRACED long next_task(void)
{
	SC_ENTER(next_task);
	long arg = -1;
	pthread_mutex_lock(&mu);
	while (queued == 0 && !shutdown_pool)
		pthread_cond_wait(&cv, &mu);
	if (queued > 0) {
		queued--;
		arg = next_arg++;
	}
	pthread_mutex_unlock(&mu);
	SC_LEAVE(next_task);
	return arg;
}

TRACED unsigned long handle_task(long arg)
{
	SC_ENTER(handle_task);
	unsigned long h = (unsigned long)arg + 1;
	for (int i = 0; i < 1000; i++) {
		h = h * 6364136223846793005ul + 1442695040888963407ul;
		SC_BARRIER();
	}
	SC_LEAVE(handle_task);
	return h;
}

TRACED void *pool_worker(void *p)
{
	SC_ENTER(pool_worker);
	struct targ *a = (struct targ *)p;
	sc_thread_begin(a->ti);
	long arg;
	while ((arg = next_task()) >= 0) {
		unsigned long h = handle_task(arg);
		pthread_mutex_lock(&mu);
		handled_sum += h; /* a sum: the same whoever handles which task */
		handled++;
		pthread_mutex_unlock(&mu);
	}
	SC_LEAVE(pool_worker);
	return NULL;
}

TRACED void start_pool(pthread_t *t, struct targ *a, int n)
{
	SC_ENTER(start_pool);
	for (int i = 0; i < n; i++) {
		a[i].ti = SC_SPAWN_INFO(start_pool);
		int err = pthread_create(&t[i], NULL, pool_worker, &a[i]);
		if (err)
			die("pthread_create", err);
	}
	SC_LEAVE(start_pool);
}

/* The busy part: a fixed loop. */
TRACED unsigned long crunch(unsigned long seed)
{
	SC_ENTER(crunch);
	unsigned long h = seed;
	for (long i = 0; i < CRUNCH_STEPS; i++) {
		h = h * 6364136223846793005ul + 1442695040888963407ul;
		SC_BARRIER();
	}
	SC_LEAVE(crunch);
	return h;
}

TRACED void post_tasks(int n)
{
	SC_ENTER(post_tasks);
	pthread_mutex_lock(&mu);
	queued += n;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	SC_LEAVE(post_tasks);
}

TRACED void stop_pool(pthread_t *t, int n)
{
	SC_ENTER(stop_pool);
	pthread_mutex_lock(&mu);
	shutdown_pool = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	SC_LEAVE(stop_pool);
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long workers = 4, rounds = 40;
	static const char *const names[] = {"--workers", "--rounds"};
	long *const vals[] = {&workers, &rounds};
	if (sc_long_flags(argc, argv, names, vals, 2) != 0 || workers < 1 ||
	    workers > MAX_WORKERS || rounds < 0 || rounds > 1000000) {
		fprintf(stderr, "usage: pool [--workers N] [--rounds R]\n");
		SC_LEAVE(main);
		return 2;
	}
	pthread_t t[MAX_WORKERS];
	struct targ a[MAX_WORKERS];
	start_pool(t, a, (int)workers);
	unsigned long h = 0xcbf29ce484222325ul;
	for (long i = 0; i < rounds; i++)
		h = crunch(h);
	post_tasks((int)workers);
	stop_pool(t, (int)workers);
	printf("pool: workers=%ld rounds=%ld handled=%ld result=%016lx\n", workers, rounds, handled,
	       h ^ handled_sum);
	fflush(stdout);
	SC_LEAVE(main);
	return sc_finish(handled == workers ? 0 : 1);
}
