/*
 * overhead: a tiny function whose share of the time the workload measures
 * itself, to check that profile takes its probes' cost out of the times.
 *
 *   overhead sleep [--rounds N]   (N = 200)
 *     main -> sleepy x 1: N x (work x 1000, usleep(1000))
 *     prints "share F": the time of the batches of work calls over
 *     sleepy's time (each batch timed with clock_gettime), about 0.1%.
 *
 *   overhead busy [--rounds N]    (N = 5)
 *     main -> with_calls x N:    200000 x (work, own work inline)
 *          -> without_calls x N: 200000 x (own work inline)
 *     prints "share F": (T1 - T2) / T1 from the fastest round of each
 *     (T1 with the calls, T2 without), about 30%.
 *
 * A profile's share to compare is work's self time over sleepy's total
 * (sleep), over with_calls' total (busy).
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(work, "work")                                                        \
	X(sleepy, "sleepy")                                                    \
	X(with_calls, "with_calls")                                            \
	X(without_calls, "without_calls")
#include "selfcheck.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUSY_LOOPS 200000
#define WORK_STEPS 24
#define OWN_STEPS 48

static volatile unsigned long sink;

SC_INLINE long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* steps dependent multiply-adds: a compiler cannot shorten the chain. */
SC_INLINE unsigned long chain(unsigned long x, int steps)
{
	for (int i = 0; i < steps; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		SC_BARRIER();
	}
	return x;
}

TRACED unsigned long work(unsigned long x, int steps)
{
	SC_ENTER(work);
	x = chain(x, steps);
	SC_LEAVE(work);
	return x;
}

TRACED double sleepy(int rounds)
{
	SC_ENTER(sleepy);
	long long start = now_ns(), busy = 0;
	unsigned long x = sink;
	for (int r = 0; r < rounds; r++) {
		long long t0 = now_ns();
		for (int i = 0; i < 1000; i++)
			x = work(x, 1);
		busy += now_ns() - t0;
		usleep(1000);
	}
	sink = x;
	double share = (double)busy / (double)(now_ns() - start);
	SC_LEAVE(sleepy);
	return share;
}

TRACED long long with_calls(void)
{
	SC_ENTER(with_calls);
	long long t0 = now_ns();
	unsigned long x = sink;
	for (int i = 0; i < BUSY_LOOPS; i++) {
		x = work(x, WORK_STEPS);
		x = chain(x, OWN_STEPS);
	}
	sink = x;
	long long took = now_ns() - t0;
	SC_LEAVE(with_calls);
	return took;
}

TRACED long long without_calls(void)
{
	SC_ENTER(without_calls);
	long long t0 = now_ns();
	unsigned long x = sink;
	for (int i = 0; i < BUSY_LOOPS; i++)
		x = chain(x, OWN_STEPS);
	sink = x;
	long long took = now_ns() - t0;
	SC_LEAVE(without_calls);
	return took;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	int busy = argc > 1 && strcmp(argv[1], "busy") == 0;
	long rounds = busy ? 5 : 200;
	{
		const char *const names[] = {"--rounds"};
		long *const vals[] = {&rounds};
		if (argc < 2 || (!busy && strcmp(argv[1], "sleep") != 0) ||
		    sc_long_flags(argc - 1, argv + 1, names, vals, 1) != 0 ||
		    rounds < 1 || rounds > 100000) {
			fprintf(stderr, "usage: overhead sleep|busy [--rounds N]\n");
			SC_LEAVE(main);
			return 2;
		}
	}
	double share;
	if (busy) {
		long long t1 = 0, t2 = 0;
		for (long r = 0; r < rounds; r++) {
			long long a = with_calls(), b = without_calls();
			if (r == 0 || a < t1)
				t1 = a;
			if (r == 0 || b < t2)
				t2 = b;
		}
		share = (double)(t1 - t2) / (double)t1;
	} else {
		share = sleepy((int)rounds);
	}
	printf("share %.6f\n", share);
	SC_LEAVE(main);
	return sc_finish(0);
}
