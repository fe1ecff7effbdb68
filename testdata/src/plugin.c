/*
 * libplugin.so: loaded by the dlopen workload with dlopen + dlsym.
 *
 *   plugin_work(x) -> plugin_sum(3) -> plugin_sum(2) -> plugin_sum(1)
 *
 * Per plugin_work call: plugin_sum 3 calls, 2 recursive.  The call goes
 * through the PLT (plugin_sum is exported, as in most real libraries).
 * The self-check counters are exported as data (plugin_selfcheck), which
 * the main program reads with dlsym.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(plugin_work, "plugin_work")                                          \
	X(plugin_sum, "plugin_sum")
#include "selfcheck.h"

TRACED long plugin_sum(int depth)
{
	SC_ENTER(plugin_sum);
	long r = depth <= 1 ? 1 : depth + plugin_sum(depth - 1);
	SC_LEAVE(plugin_sum);
	return r;
}

TRACED long plugin_work(long x)
{
	SC_ENTER(plugin_work);
	long r = x + plugin_sum(3);
	SC_LEAVE(plugin_work);
	return r;
}

SC_EXPORT_MODULE(plugin_selfcheck);
