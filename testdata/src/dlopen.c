/*
 * dlopen: calls into a shared library loaded at run time.
 *
 *   main -> load_plugin            dlopen(<dir of /proc/self/exe>/libplugin.so)
 *   main -> dlsym("plugin_work")
 *   main -> call_plugin -> plugin_work x5 (in libplugin.so, see plugin.c)
 *
 * Functions: main 1, load_plugin 1, call_plugin 1, and in the library
 * "libplugin.so:plugin_work" 5, "libplugin.so:plugin_sum" 15 (10 recursive).
 * The library stays loaded until exit (no dlclose).
 *
 * Self-check: the library's counters are read through the exported data
 * symbol plugin_selfcheck.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(load_plugin, "load_plugin")                                          \
	X(call_plugin, "call_plugin")
#include "selfcheck.h"

#include <dlfcn.h>

#define PLUGIN "libplugin.so"
#define CALLS 5

typedef long (*work_fn)(long);

TRACED void *load_plugin(void)
{
	SC_ENTER(load_plugin);
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n < 0)
		n = 0;
	path[n] = '\0';
	char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
	snprintf(path + dir, sizeof path - dir, "%s", PLUGIN);
	void *h = dlopen(path, RTLD_NOW);
	if (!h)
		fprintf(stderr, "dlopen: %s\n", dlerror());
	SC_LEAVE(load_plugin);
	return h;
}

TRACED long call_plugin(work_fn work, int times)
{
	SC_ENTER(call_plugin);
	long sum = 0;
	for (int i = 0; i < times; i++)
		sum += work(i);
	SC_LEAVE(call_plugin);
	return sum;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	void *h = load_plugin();
	if (!h) {
		SC_LEAVE(main);
		return 1;
	}
	work_fn work = (work_fn)dlsym(h, "plugin_work");
	if (!work) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		SC_LEAVE(main);
		return 1;
	}
	long sum = call_plugin(work, CALLS);
	/* plugin_work(i) = i + 3 + 2 + 1 */
	int ok = sum == CALLS * (CALLS - 1) / 2 + 6 * CALLS;
	printf("dlopen: %s result=%ld\n", PLUGIN, sum);
	if (!ok)
		fprintf(stderr, "dlopen: wrong result %ld\n", sum);
	if (sc_enabled) {
		const struct sc_module *m =
		    (const struct sc_module *)dlsym(h, "plugin_selfcheck");
		if (m)
			sc_merge_module(PLUGIN, m);
		else
			ok = 0;
	}
	SC_LEAVE(main);
	return sc_finish(ok ? 0 : 1);
}
