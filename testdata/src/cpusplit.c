/*
 * cpusplit - CPU time split in known proportions: the sampled times'
 * workload. Usage: cpusplit ROUNDS
 *
 * Each round, heavy spins 3 units and light 1 unit of the same loop, and
 * light calls tiny (a short function: the one tests count, not time)
 * 1,000 times. So heavy's CPU time is three times light's own, whatever
 * the machine; tiny's (40 steps a call) is some tenth of light's. fill
 * spends its time in the C library (memset of 2 MiB a round), none in
 * its own code. It prints the CPU time heavy's and light's spins took,
 * by its own clock (CLOCK_THREAD_CPUTIME_ID): the machine (another
 * thread on the core's sibling, the hypervisor) may bend the 3:1 split.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))
#define UNIT 200000

volatile long sink;
static long heavy_ns, light_ns;

static inline long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

NOINLINE long tiny(long x)
{
	for (int i = 0; i < 40; i++)
		x ^= x >> 3;
	return x;
}

static inline void spin(long units)
{
	for (long i = 0; i < units * UNIT; i++)
		sink += i;
}

NOINLINE void heavy(void)
{
	long t0 = cpu_ns();
	spin(3);
	heavy_ns += cpu_ns() - t0;
}

static char buf[2 << 20];

NOINLINE void fill(long r)
{
	memset(buf, (int)r, sizeof buf);
	sink += buf[r & 1023];
}

NOINLINE void light(void)
{
	long t0 = cpu_ns();
	spin(1);
	light_ns += cpu_ns() - t0;
	long s = 0;
	for (long i = 0; i < 1000; i++)
		s += tiny(i);
	sink += s;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	for (long r = 0; r < rounds; r++) {
		heavy();
		light();
		fill(r);
	}
	printf("cpusplit: %ld rounds, heavy %ld ns, light %ld ns of CPU\n", rounds, heavy_ns, light_ns);
	return 0;
}
