/*
 * inplace - a signal handler still running when a profiler detaches, whose
 * thread it interrupted at the call an inline probe keeps in the
 * function's own bytes.
 *
 *   inplace SECONDS [tramp]
 *
 * wrap is assembly: sub $8,%rsp; call leaf; add $8,%rsp; ret, laid out so
 * that a page begins at its byte +6, with nothing else on that page. An
 * inline probe keeps its call in place as "call *%r11" in bytes +6..+8
 * (the original call is +4..+8). main calls wrap until those bytes read
 * so (SECONDS at most: then it prints "inplace: never patched" and exits
 * 3), then takes execution away from that page and calls wrap once more:
 * the probe runs, and the thread faults as it goes to +6. The SIGSEGV
 * handler gives the page back, prints "inplace: faulted" and waits, at most SECONDS, until the bytes
 * at +6 are the original call's again (the profiler detached); the kernel
 * then resumes the thread at the pc its signal frame holds, which must be
 * the original call's, +4. It prints "inplace: fault at +F, resumes at
 * +R" and, once that call returned, "inplace: done", and exits 0. Bad
 * arguments: exit 2.
 *
 * With "tramp", main takes execution away from the page of the probe's
 * trampoline instead (wrap's jump leads there: trace wrap alone, or the
 * handler's own probe faults too), so that the thread faults as it enters
 * the trampoline; the handler gives that page back (read, write and
 * execute, as the profiler mapped it), prints "inplace: faulted in the
 * trampoline" and waits the same way. Resumed there after the detach, the
 * thread runs the trampoline, which must take it to the original call
 * now that wrap has its bytes back: main prints "inplace: through the
 * trampoline" and "inplace: done". A fault anywhere else prints
 * "inplace: a second fault at" where, and exits 6.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone, noipa))

__asm__(".pushsection .text\n"
	".p2align 12\n"
	".skip 4090, 0xcc\n"
	".globl wrap\n"
	".type wrap, @function\n"
	"wrap:\n"
	".cfi_startproc\n"
	"\tsubq $8, %rsp\n"
	".cfi_def_cfa_offset 16\n"
	"\tcall leaf\n"
	"\taddq $8, %rsp\n"
	".cfi_def_cfa_offset 8\n"
	"\tret\n"
	".cfi_endproc\n"
	".size wrap, . - wrap\n"
	".p2align 12, 0xcc\n"
	".popsection\n");
unsigned long wrap(void);

static volatile unsigned long counter;
static long seconds;
static char *tail; /* wrap+6: its page */
static long page;
static uintptr_t fault_at, resume_at;
static uintptr_t tramp;  /* tramp mode: the trampoline wrap's jump leads to */
static char *tramp_page; /* and its page */

NOINLINE unsigned long leaf(void) { return ++counter; }

static const unsigned char in_place[] = {0x41, 0xff, 0xd3};

static int patched(void) { return memcmp((char *)wrap + 6, in_place, sizeof in_place) == 0; }

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	(void)sig;
	(void)si;
	if (tramp != 0) {
		if (fault_at != 0 || (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] != tramp) {
			char msg[96];
			int n = snprintf(msg, sizeof msg, "inplace: a second fault at wrap%+ld, trampoline%+ld\n",
					 (long)(uc->uc_mcontext.gregs[REG_RIP] - (uintptr_t)wrap),
					 (long)(uc->uc_mcontext.gregs[REG_RIP] - tramp));
			if (write(1, msg, n) < 0)
				_exit(4);
			_exit(6);
		}
		fault_at = 1;
		if (mprotect(tramp_page, page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
			_exit(4);
		static const char msg[] = "inplace: faulted in the trampoline\n";
		if (write(1, msg, sizeof msg - 1) != sizeof msg - 1)
			_exit(4);
		double end = now() + seconds;
		while (patched() && now() < end)
			usleep(1000);
		return;
	}
	fault_at = uc->uc_mcontext.gregs[REG_RIP] - (uintptr_t)wrap;
	if (mprotect(tail, page, PROT_READ | PROT_EXEC) != 0)
		_exit(4);
	static const char msg[] = "inplace: faulted\n";
	if (write(1, msg, sizeof msg - 1) != sizeof msg - 1)
		_exit(4);
	double end = now() + seconds;
	while (fault_at == 6 && patched() && now() < end)
		usleep(1000);
	resume_at = uc->uc_mcontext.gregs[REG_RIP] - (uintptr_t)wrap;
}

int main(int argc, char **argv)
{
	seconds = argc == 2 || argc == 3 ? strtol(argv[1], NULL, 10) : 0;
	int in_tramp = argc == 3 && strcmp(argv[2], "tramp") == 0;
	if (seconds <= 0 || (argc == 3 && !in_tramp)) {
		fprintf(stderr, "usage: inplace SECONDS [tramp]\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	tail = (char *)wrap + 6;
	if ((uintptr_t)tail % page != 0)
		return 5;
	static char altstack[1 << 16];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGSEGV, &sa, NULL) != 0)
		return 4;
	double end = now() + seconds;
	while (!patched()) {
		if (now() > end) {
			printf("inplace: never patched\n");
			return 3;
		}
		for (int i = 0; i < 1000; i++)
			wrap();
		usleep(1000);
	}
	if (in_tramp) {
		const unsigned char *w = (const unsigned char *)wrap;
		int32_t rel;
		memcpy(&rel, w + 1, sizeof rel);
		if (w[0] != 0xe9)
			return 5;
		tramp_page = (char *)((tramp = (uintptr_t)wrap + 5 + rel) & ~(uintptr_t)(page - 1));
		if (mprotect(tramp_page, page, PROT_READ) != 0)
			return 4;
		wrap();
		printf("inplace: through the trampoline\n");
		printf("inplace: done\n");
		return 0;
	}
	if (mprotect(tail, page, PROT_READ) != 0)
		return 4;
	wrap();
	printf("inplace: fault at +%lu, resumes at +%lu\n", (unsigned long)fault_at, (unsigned long)resume_at);
	printf("inplace: done\n");
	return 0;
}
