/* dlopen, call, dlclose, dlopen again, call: the plugin's breakpoints
 * must go with the first mapping and come back with the second. Also a
 * tail call (built with sibling calls on): tail() jumps into leaf(). */
#include <dlfcn.h>
#include <stdio.h>

/* leaf and tail spin some hundreds of ns: a call a --slow of 1ns keeps
 * must last longer than a step of the clock. On an AMD EPYC VM the
 * time-stamp counter advances in steps of 26 ticks (10 ns), and two reads
 * a step or so apart may differ by 1 tick (0.4 ns): leaf's return read 1
 * tick after its entry in 7 of 200 runs without the spin, tail's end in
 * 1 of 100 with leaf's alone. */
#define SPIN() for (int i = 0; i < 200; i++) __asm__ volatile("" ::: "memory")
__attribute__((noinline)) int leaf(int x)
{
	SPIN();
	return x * 3;
}
__attribute__((noinline)) int tail(int x)
{
	SPIN();
	return leaf(x + 1);
}

int main(int argc, char **argv)
{
	int sum = 0;
	for (int round = 0; round < 2; round++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "reload: %s\n", dlerror());
			return 2;
		}
		long (*work)(long) = (long (*)(long))dlsym(h, "plugin_work");
		sum += work(3);
		dlclose(h);
	}
	sum += tail(1) + tail(2);
	printf("reload: %d\n", sum);
	return 0;
}
