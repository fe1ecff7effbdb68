// chain.c is the real-process fixture of the unwind tests. main calls
// a -> b -> c; c captures its own registers and dumps them, the stack from
// its rsp to the end of the stack mapping and /proc/self/maps to stdout, so
// the Go test can unwind the snapshot without ptrace. With the argument
// "qsort" c instead calls qsort, whose comparator captures, so the unwinder
// must go through libc's CFI; with "signal" c raises SIGUSR1, whose handler
// captures, so the unwinder must also go through the signal frame
// (__restore_rt, an 'S' FDE whose rules are DWARF expressions).
//
// Each function records its return address (__builtin_return_address) and
// its CFA (__builtin_dwarf_cfa, the rsp before the call that created it) in
// globals before calling on, which the dump reports as the expected frames.
//
// Output lines (all numbers hex):
//   reg NAME VALUE            rip rsp rbp rbx r12 r13 r14 r15
//   want FUNC RA CFA          cmp or handler (in those modes), c, b, a
//   stack ADDR WORDS          then WORDS lines of one 64-bit word each
//   map LINE                  one per line of /proc/self/maps
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))
#define MAX_STACK (1 << 20)

struct regs {
	uint64_t rip, rsp, rbp, rbx, r12, r13, r14, r15;
};

// CAPTURE stores the registers at this point: rip is the address after the
// lea, which lies in the asm block, where rsp is the one stored.
#define CAPTURE(r)                                 \
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"      \
			 "mov %%rax, 0(%0)\n\t"         \
			 "mov %%rsp, 8(%0)\n\t"         \
			 "mov %%rbp, 16(%0)\n\t"        \
			 "mov %%rbx, 24(%0)\n\t"        \
			 "mov %%r12, 32(%0)\n\t"        \
			 "mov %%r13, 40(%0)\n\t"        \
			 "mov %%r14, 48(%0)\n\t"        \
			 "mov %%r15, 56(%0)\n\t"        \
			 :                              \
			 : "r"(r)                       \
			 : "rax", "memory")

#define RECORD(f)                                                   \
	do {                                                        \
		ra_##f = (uint64_t)__builtin_return_address(0);    \
		cfa_##f = (uint64_t)__builtin_dwarf_cfa();         \
	} while (0)

uint64_t ra_a, ra_b, ra_c, ra_cmp, ra_handler;
uint64_t cfa_a, cfa_b, cfa_c, cfa_cmp, cfa_handler;
static enum { DIRECT, QSORT, SIGNAL } mode;
volatile uint64_t sink;

NOINLINE void dump(const struct regs *r) {
	const char *names[] = {"rip", "rsp", "rbp", "rbx", "r12", "r13", "r14", "r15"};
	const uint64_t *v = &r->rip;
	for (int i = 0; i < 8; i++)
		printf("reg %s %lx\n", names[i], (unsigned long)v[i]);
	if (mode == QSORT)
		printf("want cmp %lx %lx\n", (unsigned long)ra_cmp, (unsigned long)cfa_cmp);
	if (mode == SIGNAL)
		printf("want handler %lx %lx\n", (unsigned long)ra_handler, (unsigned long)cfa_handler);
	printf("want c %lx %lx\n", (unsigned long)ra_c, (unsigned long)cfa_c);
	printf("want b %lx %lx\n", (unsigned long)ra_b, (unsigned long)cfa_b);
	printf("want a %lx %lx\n", (unsigned long)ra_a, (unsigned long)cfa_a);

	FILE *maps = fopen("/proc/self/maps", "r");
	if (!maps) {
		perror("/proc/self/maps");
		exit(2);
	}
	char line[4096];
	uint64_t end = 0;
	while (fgets(line, sizeof line, maps)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && r->rsp >= lo && r->rsp < hi)
			end = hi;
		printf("map %s", line);
	}
	fclose(maps);
	if (end == 0) {
		fprintf(stderr, "no mapping holds rsp %lx\n", (unsigned long)r->rsp);
		exit(2);
	}
	if (end - r->rsp > MAX_STACK)
		end = r->rsp + MAX_STACK;
	printf("stack %lx %lx\n", (unsigned long)r->rsp, (unsigned long)((end - r->rsp) / 8));
	for (const uint64_t *p = (const uint64_t *)r->rsp; (uint64_t)p < end; p++)
		printf("%lx\n", (unsigned long)*p);
	fflush(stdout);
}

NOINLINE int cmp(const void *x, const void *y) {
	static int done;
	if (!done) {
		done = 1;
		RECORD(cmp);
		struct regs r;
		CAPTURE(&r);
		dump(&r);
	}
	return *(const int *)x - *(const int *)y;
}

NOINLINE void handler(int sig) {
	(void)sig;
	RECORD(handler);
	struct regs r;
	CAPTURE(&r);
	dump(&r);
}

NOINLINE uint64_t c(int n) {
	volatile char buf[40];
	buf[n & 7] = (char)n;
	RECORD(c);
	if (mode == SIGNAL) {
		raise(SIGUSR1);
		return buf[1] + (uint64_t)n;
	}
	if (mode == QSORT) {
		int arr[5] = {3, 1, 4, 0, 2};
		qsort(arr, 5, sizeof arr[0], cmp);
		return (uint64_t)arr[n & 3] + buf[1];
	}
	struct regs r;
	CAPTURE(&r);
	dump(&r);
	return buf[1] + (uint64_t)n;
}

NOINLINE uint64_t b(int n) {
	volatile char buf[200];
	buf[n & 7] = (char)n;
	RECORD(b);
	return c(n + 1) + buf[2];
}

NOINLINE uint64_t a(int n) {
	volatile char buf[1000];
	buf[n & 7] = (char)n;
	RECORD(a);
	return b(n + 1) + buf[3];
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "qsort") == 0)
		mode = QSORT;
	if (argc > 1 && strcmp(argv[1], "signal") == 0) {
		mode = SIGNAL;
		signal(SIGUSR1, handler);
	}
	sink = a(argc);
	return 0;
}
