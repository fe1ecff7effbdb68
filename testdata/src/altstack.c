/*
 * altstack: a signal handler on a sigaltstack that lies ABOVE the
 * interrupted stack, calling back into a function that is still running.
 *
 *   main -> spawn_runner --pthread--> runner (on a stack in .bss, low)
 *   runner -> work(1) -> raise(SIGUSR1) -> on_signal (on an mmap'ed
 *   sigaltstack, high) -> work(0)
 *
 * A tracer that closes frames by comparing stack pointers alone would close
 * work(1) when on_signal's work(0) enters (its sp is higher) and miss that
 * work(0) is recursive.  Counts: main 1, spawn_runner 1, runner 1,
 * work 2 (1 recursive), on_signal 1.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(spawn_runner, "spawn_runner")                                        \
	X(runner, "runner")                                                    \
	X(work, "work")                                                        \
	X(on_signal, "on_signal")
#include "selfcheck.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#define STACK_SIZE (256 * 1024)

static char low_stack[STACK_SIZE] __attribute__((aligned(64)));
static volatile long total;

TRACED long work(int again)
{
	SC_ENTER(work);
	long v = again;
	if (again)
		raise(SIGUSR1); /* the handler runs work(0) on the altstack */
	total += v + 1;
	SC_LEAVE(work);
	return v;
}

TRACED void on_signal(int sig)
{
	SC_ENTER(on_signal);
	(void)sig;
	work(0);
	SC_LEAVE(on_signal);
}

struct runner_arg {
	struct sc_tinfo ti;
};

TRACED void *runner(void *p)
{
	SC_ENTER(runner);
	struct runner_arg *a = p;
	sc_thread_begin(a->ti);
	stack_t ss = {0};
	ss.ss_size = STACK_SIZE;
	ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ss.ss_sp == MAP_FAILED || (char *)ss.ss_sp < low_stack ||
	    sigaltstack(&ss, NULL) != 0) {
		fprintf(stderr, "altstack: no sigaltstack above the thread stack\n");
		exit(2);
	}
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	work(1);
	SC_LEAVE(runner);
	return NULL;
}

TRACED void spawn_runner(void)
{
	SC_ENTER(spawn_runner);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, low_stack, sizeof low_stack);
	struct runner_arg a = {SC_SPAWN_INFO(spawn_runner)};
	pthread_t th;
	pthread_create(&th, &attr, runner, &a);
	pthread_join(th, NULL);
	SC_LEAVE(spawn_runner);
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	spawn_runner();
	printf("altstack: total=%ld\n", total);
	SC_LEAVE(main);
	return sc_finish(total == 3 ? 0 : 1);
}
