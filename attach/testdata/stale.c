/* stale: prints, from inside traced calls, the shadow depth and the
 * stale bound (T_STALE) the inline probes keep for this thread, found as
 * the return stub finds them: the copy of the stub code this call returns
 * to, its data pointer, the thread table (argv: the stub's offsets and
 * the table's, as attach/internal/stub gives them). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static uintptr_t retstub, dataptr, table, depth, stale;
static int fds[2];
static char out[256];
static int outlen;

__attribute__((noinline)) void report(const char *what)
{
	uintptr_t base = (uintptr_t)__builtin_return_address(0) - retstub;
	uintptr_t data = *(uintptr_t *)(base + dataptr);
	uintptr_t fs;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(fs));
	/* the stub's hash and linear probe (LOOKUP in probe.S) */
	unsigned h = (unsigned)(((uint64_t)(fs >> 12) * 0x5bd1e995UL) >> 52);
	for (;;) {
		uint64_t *e = (uint64_t *)(data + table + 16 * (uintptr_t)h);
		if (e[0] == fs) {
			outlen += snprintf(out + outlen, sizeof out - outlen, "%s: depth %lu stale %lu\n", what,
					   (unsigned long)*(uint64_t *)(e[1] + depth), (unsigned long)*(uint64_t *)(e[1] + stale));
			return;
		}
		if (e[0] == 0) {
			outlen += snprintf(out + outlen, sizeof out - outlen, "%s: no state\n", what);
			return;
		}
		h = (h + 1) & 4095;
	}
}

__attribute__((noinline)) void waits(void)
{
	char c;
	if (read(fds[0], &c, 1) != 1)
		exit(2);
	report("after read");
}

__attribute__((noinline)) void fresh(void)
{
	report("fresh");
}

int main(int argc, char **argv)
{
	if (argc != 6)
		return 1;
	retstub = strtoul(argv[1], 0, 0);
	dataptr = strtoul(argv[2], 0, 0);
	table = strtoul(argv[3], 0, 0);
	depth = strtoul(argv[4], 0, 0);
	stale = strtoul(argv[5], 0, 0);
	if (pipe(fds) != 0 || write(fds[1], "x", 1) != 1)
		return 1;
	waits();
	fresh();
	report("main");
	fputs(out, stdout);
	return 0;
}
