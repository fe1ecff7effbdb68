/*
 * rate: calls its functions at known rates, for as long as it runs, to
 * check live views (profile top) against.
 *
 *   rate [--hz N] [--work US] [--seconds S]   (1000 ticks/s, 600 us, forever)
 *
 *   main -> tick x N per second (on absolute deadlines: a late tick is
 *           caught up, so the long-run rate stays N)
 *     tick -> hot x 1      (spins WORK us: the function with the most self time)
 *          -> light x 3
 *
 * Every second of wall time it prints "second K: tick=T hot=H light=L", the
 * calls made in that second, so a test compares a live rate with the
 * workload's own (lower than N when the machine cannot keep up).
 * Counts depend on how long it runs: no expected file; --selfcheck still
 * reports them.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(tick, "tick")                                                        \
	X(hot, "hot")                                                          \
	X(light, "light")
#include "selfcheck.h"

#include <time.h>

static long n_tick, n_hot, n_light;

SC_INLINE long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

TRACED unsigned long hot(long work_ns)
{
	SC_ENTER(hot);
	n_hot++;
	unsigned long x = 0x9e3779b97f4a7c15ul;
	long long end = now_ns() + work_ns;
	do {
		for (int i = 0; i < 64; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	} while (now_ns() < end);
	SC_LEAVE(hot);
	return x;
}

TRACED unsigned long light(unsigned long x)
{
	SC_ENTER(light);
	n_light++;
	x ^= x >> 29;
	SC_BARRIER();
	SC_LEAVE(light);
	return x;
}

TRACED unsigned long tick(long work_ns)
{
	SC_ENTER(tick);
	n_tick++;
	unsigned long x = hot(work_ns);
	for (int i = 0; i < 3; i++)
		x = light(x);
	SC_LEAVE(tick);
	return x;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long hz = 1000, work = 600, seconds = 0;
	{
		const char *const names[] = {"--hz", "--work", "--seconds"};
		long *const vals[] = {&hz, &work, &seconds};
		if (sc_long_flags(argc, argv, names, vals, 3) != 0 || hz < 1 ||
		    hz > 100000 || work < 0 || seconds < 0) {
			fprintf(stderr, "usage: rate [--hz N] [--work US] [--seconds S]\n");
			SC_LEAVE(main);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	long long period = 1000000000LL / hz, start = now_ns();
	long long deadline = start, next_report = start + 1000000000LL;
	long sec = 0, last_tick = 0, last_hot = 0, last_light = 0;
	unsigned long sum = 0;
	while (seconds == 0 || sec < seconds) {
		sum += tick(work * 1000);
		deadline += period;
		struct timespec ts = {deadline / 1000000000LL,
				      deadline % 1000000000LL};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
		if (now_ns() >= next_report) {
			sec++;
			printf("second %ld: tick=%ld hot=%ld light=%ld\n", sec,
			       n_tick - last_tick, n_hot - last_hot,
			       n_light - last_light);
			last_tick = n_tick, last_hot = n_hot, last_light = n_light;
			next_report += 1000000000LL;
		}
	}
	printf("sum=%lu\n", sum & 1);
	SC_LEAVE(main);
	return sc_finish(0);
}
