/*
 * sigalrm: a periodic SIGALRM handler calling traced functions while the
 * main thread calls others, with exact counts.
 *
 *   sigalrm [TICKS [ITERATIONS]]          (default 2000 200000)
 *
 *   main -> loop_work x ITERATIONS -> leaf x2 each
 *   SIGALRM (setitimer ITIMER_REAL, 100 us period, SA_RESTART), on the
 *   main thread wherever it is: on_tick -> tick_work
 *
 * Exact counts: on_tick counts its runs in a volatile sig_atomic_t; the run
 * that makes it TICKS disarms the timer and sets SIGALRM to SIG_IGN, which
 * also discards a SIGALRM that became pending while the handler ran, so
 * on_tick runs exactly TICKS times.  main runs exactly ITERATIONS
 * iterations, then waits in sigsuspend (SIGALRM blocked between checks, so
 * no tick is missed) until all TICKS ticks have happened.  Whichever ends
 * first, the counts are the same.  Default run: main 1,
 * loop_work 200000, leaf 400000, on_tick 2000, tick_work 2000, none
 * recursive (SIGALRM is blocked while on_tick runs, and the handler's
 * functions are not the main loop's).  Runtime: at least TICKS * 100 us
 * (0.2 s by default).
 *
 * stdout: one line "sigalrm: ticks=N iterations=M loop=<hex> tick=<hex>";
 * both values depend only on N and M (each tick's work depends only on its
 * index, and ticks run one after the other), and are checked against a
 * reference computed without calls: exit status 1 if they differ, 2 on bad
 * arguments.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(loop_work, "loop_work")                                              \
	X(leaf, "leaf")                                                        \
	X(on_tick, "on_tick")                                                  \
	X(tick_work, "tick_work")
#include "selfcheck.h"

#include <signal.h>
#include <sys/time.h>

#define PERIOD_US 100
#define DEFAULT_TICKS 2000
#define DEFAULT_ITERATIONS 200000

static volatile sig_atomic_t ticks;
static sig_atomic_t target_ticks;
static volatile unsigned long tick_sum;

SC_INLINE unsigned long mix_ref(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ul;
	x ^= x >> 27;
	return x;
}

TRACED unsigned long leaf(unsigned long x)
{
	SC_ENTER(leaf);
	unsigned long r = mix_ref(x);
	SC_LEAVE(leaf);
	return r;
}

TRACED unsigned long loop_work(unsigned long i)
{
	SC_ENTER(loop_work);
	unsigned long r = leaf(2 * i) + leaf(2 * i + 1);
	SC_LEAVE(loop_work);
	return r;
}

TRACED unsigned long tick_work(unsigned long n)
{
	SC_ENTER(tick_work);
	unsigned long r = mix_ref(n + 0x9e3779b97f4a7c15ul);
	SC_LEAVE(tick_work);
	return r;
}

TRACED void on_tick(int sig)
{
	SC_ENTER(on_tick);
	int saved = errno;
	(void)sig;
	sig_atomic_t n = ticks + 1;
	tick_sum = tick_sum * 31 + tick_work((unsigned long)n);
	if (n >= target_ticks) {
		/* The last tick: no more timer, and SIG_IGN discards a SIGALRM
		 * that expired while this handler ran (it is pending now). */
		struct itimerval stop;
		memset(&stop, 0, sizeof stop);
		setitimer(ITIMER_REAL, &stop, NULL);
		struct sigaction ign;
		memset(&ign, 0, sizeof ign);
		ign.sa_handler = SIG_IGN;
		sigemptyset(&ign.sa_mask);
		sigaction(SIGALRM, &ign, NULL);
	}
	ticks = n;
	errno = saved;
	SC_LEAVE(on_tick);
}

#define usage()                                                                \
	do {                                                                   \
		fprintf(stderr, "usage: sigalrm [TICKS [ITERATIONS]]\n");      \
		SC_LEAVE(main);                                                \
		return 2;                                                      \
	} while (0)

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long nticks = DEFAULT_TICKS, iterations = DEFAULT_ITERATIONS;
	long *const vals[] = {&nticks, &iterations};
	if (argc > 3)
		usage();
	for (int i = 1; i < argc; i++) {
		char *end;
		*vals[i - 1] = strtol(argv[i], &end, 10);
		if (argv[i][0] == '\0' || *end != '\0')
			usage();
	}
	if (nticks < 0 || nticks > 100000000 || iterations < 0)
		usage();
	target_ticks = (sig_atomic_t)nticks;

	sigset_t alrm, old;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	if (nticks > 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_tick;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		struct itimerval it;
		memset(&it, 0, sizeof it);
		it.it_interval.tv_usec = PERIOD_US;
		it.it_value.tv_usec = PERIOD_US;
		if (sigaction(SIGALRM, &sa, NULL) != 0 ||
		    setitimer(ITIMER_REAL, &it, NULL) != 0) {
			perror("sigalrm: timer");
			SC_LEAVE(main);
			return sc_finish(1);
		}
	}

	unsigned long loop_sum = 0;
	for (long i = 0; i < iterations; i++)
		loop_sum = loop_sum * 31 + loop_work((unsigned long)i);

	/* Wait for the remaining ticks; SIGALRM is blocked between the check
	 * and sigsuspend, so a tick cannot slip in unnoticed. */
	sigprocmask(SIG_BLOCK, &alrm, &old);
	while (ticks < target_ticks)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);

	unsigned long want_loop = 0, want_tick = 0;
	for (long i = 0; i < iterations; i++)
		want_loop = want_loop * 31 +
			    mix_ref(2 * (unsigned long)i) +
			    mix_ref(2 * (unsigned long)i + 1);
	for (long n = 1; n <= nticks; n++)
		want_tick = want_tick * 31 +
			    mix_ref((unsigned long)n + 0x9e3779b97f4a7c15ul);

	printf("sigalrm: ticks=%ld iterations=%ld loop=%016lx tick=%016lx\n",
	       (long)ticks, iterations, loop_sum, tick_sum);
	int code = 0;
	if (loop_sum != want_loop || tick_sum != want_tick ||
	    ticks != target_ticks) {
		fprintf(stderr, "sigalrm: wrong result\n");
		code = 1;
	}
	SC_LEAVE(main);
	return sc_finish(code);
}
