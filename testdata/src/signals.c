/*
 * signals: a multi-threaded program that says which signals it acted on,
 * to check that a profiler attaching to it loses none.
 *
 *   signals [THREADS [SECONDS]]           (default 3 10)
 *
 *   main -> pthread_create x THREADS  worker -> work (until told to stop)
 *   SIGUSR1 -> on_usr1 (counts)   SIGTERM, SIGINT -> on_end (notes which)
 *
 * The workers block the three; main, which takes them, prints "signals:
 * ready" once every worker runs, then sleeps 5 ms at a time until SIGTERM
 * or SIGINT has come (a pending SIGUSR1 is handled before main's code
 * goes on), stops and joins the workers, and prints "signals: usr1=U end=TERM" (or
 * INT) and exits 0; SECONDS with neither prints "end=none" and exits 3.
 * U is the number of SIGUSR1s handled: one per SIGUSR1 sent, when the
 * sender waits for none to be pending before the next (standard signals
 * do not queue). Bad arguments: exit 2.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(worker, "worker")                                                    \
	X(work, "work")                                                        \
	X(on_usr1, "on_usr1")                                                  \
	X(on_end, "on_end")
#include "selfcheck.h"

#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <time.h>

#define MAX_THREADS 64

static volatile sig_atomic_t usr1s, ended;
static volatile int stopping;
static volatile int running;

TRACED unsigned long work(unsigned long x)
{
	SC_ENTER(work);
	for (int i = 0; i < 200; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	SC_LEAVE(work);
	return x;
}

TRACED void *worker(void *arg)
{
	SC_ENTER(worker);
	unsigned long x = (unsigned long)(uintptr_t)arg;
	__atomic_add_fetch(&running, 1, __ATOMIC_SEQ_CST);
	while (!stopping)
		x = work(x);
	SC_LEAVE(worker);
	return (void *)(uintptr_t)x;
}

TRACED void on_usr1(int sig)
{
	SC_ENTER(on_usr1);
	(void)sig;
	usr1s = usr1s + 1;
	SC_LEAVE(on_usr1);
}

TRACED void on_end(int sig)
{
	SC_ENTER(on_end);
	if (!ended)
		ended = sig;
	SC_LEAVE(on_end);
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long threads = 3, seconds = 10;
	long *const vals[] = {&threads, &seconds};
	if (argc > 3) {
		fprintf(stderr, "usage: signals [THREADS [SECONDS]]\n");
		SC_LEAVE(main);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		char *end;
		*vals[i - 1] = strtol(argv[i], &end, 10);
		if (*end || end == argv[i] || *vals[i - 1] < 1) {
			fprintf(stderr, "signals: bad argument %s\n", argv[i]);
			SC_LEAVE(main);
			return 2;
		}
	}
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;

	/* Blocked in every worker: main takes them. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_end;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	pthread_t tids[MAX_THREADS];
	for (long i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	while (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < threads)
		sched_yield();
	printf("signals: ready\n");
	fflush(stdout);

	/* Main takes them, wherever it is: unblocked here alone. */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!ended) {
		struct timespec tick = {0, 5 * 1000 * 1000};
		nanosleep(&tick, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= seconds)
			break;
	}
	stopping = 1;
	for (long i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	printf("signals: usr1=%d end=%s\n", (int)usr1s,
	       ended == SIGTERM ? "TERM" : ended == SIGINT ? "INT" : "none");
	SC_LEAVE(main);
	return ended ? 0 : 3;
}
