/* dlopen, call, dlclose, dlopen again, call: the plugin's breakpoints
 * must go with the first mapping and come back with the second. Also a
 * tail call (built with sibling calls on): tail() jumps into leaf(). */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((noinline)) int leaf(int x) { __asm__ volatile("" ::: "memory"); return x * 3; }
__attribute__((noinline)) int tail(int x) { return leaf(x + 1); }

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
