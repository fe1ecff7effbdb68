/*
 * sigentry - a signal handler still running while a profiler attaches,
 * whose thread it interrupted inside a function's first bytes.
 *
 *   sigentry SECONDS
 *
 * victim is assembly: xor %eax,%eax (2 bytes); add $1,%eax; ret, laid out
 * so that a page begins at its byte +2, with nothing else on that page.
 * main takes execution away from that page and calls victim: the thread
 * faults as it goes to +2. The SIGSEGV handler gives the page back,
 * prints "sigentry: faulted" and waits, at most SECONDS, until other's
 * first bytes change (a profiler's probes are in); then it returns, and
 * the kernel resumes the thread at +2: an entry patch over victim's
 * first five bytes would send it into the middle of its jump (the
 * handler then sees a second fault and exits 6, or the thread dies of
 * SIGILL). main then calls victim and other 10,000 times each, prints
 * "sigentry: resumed at +2, 10000 calls" (or, if the bytes never changed,
 * "sigentry: never probed" and exits 3), and waits, at most SECONDS, for
 * SIGUSR1 (blocked and polled) before it exits 0. Bad arguments: exit 2.
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
	".skip 4094, 0xcc\n"
	".globl victim\n"
	".type victim, @function\n"
	"victim:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"
	".Lvictim_2:\n"
	"\taddl $1, %eax\n"
	"\tret\n"
	".cfi_endproc\n"
	".size victim, . - victim\n"
	".p2align 12, 0xcc\n"
	".popsection\n");
int victim(void);
/* victim+2, by an assembler-local label (no symbol to split victim):
 * victim's own address is never taken, so that every way into it is a
 * direct call and a call-site probe can take it. */
extern char victim_2[] __asm__(".Lvictim_2");

static long seconds;
static char *tail; /* victim_2: its page */
static long page;
static uintptr_t fault_at, resume_at;
static unsigned char other_was[16];
static volatile long sink;

NOINLINE long other(long x) { return x * 3 + sink; }

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int probed(void) { return memcmp((void *)other, other_was, sizeof other_was) != 0; }

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	(void)sig;
	(void)si;
	uintptr_t at = uc->uc_mcontext.gregs[REG_RIP] - (uintptr_t)victim_2 + 2;
	if (fault_at != 0 || at != 2) {
		static const char msg[] = "sigentry: a second fault\n";
		if (write(1, msg, sizeof msg - 1) < 0)
			_exit(4);
		_exit(6);
	}
	fault_at = at;
	if (mprotect(tail, page, PROT_READ | PROT_EXEC) != 0)
		_exit(4);
	static const char msg[] = "sigentry: faulted\n";
	if (write(1, msg, sizeof msg - 1) != sizeof msg - 1)
		_exit(4);
	double end = now() + seconds;
	while (!probed() && now() < end)
		usleep(1000);
	resume_at = uc->uc_mcontext.gregs[REG_RIP] - (uintptr_t)victim_2 + 2;
}

int main(int argc, char **argv)
{
	seconds = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	if (seconds <= 0) {
		fprintf(stderr, "usage: sigentry SECONDS\n");
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	tail = victim_2;
	if ((uintptr_t)tail % page != 0)
		return 5;
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO};
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		return 4;
	memcpy(other_was, (void *)other, sizeof other_was);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mprotect(tail, page, PROT_READ) != 0)
		return 4;
	long sum = victim();
	if (!probed()) {
		printf("sigentry: never probed\n");
		return 3;
	}
	for (long i = 0; i < 10000; i++)
		sum += victim() + other(i);
	sink = sum;
	printf("sigentry: resumed at +%lu, 10000 calls\n", (unsigned long)resume_at);
	sigset_t pending;
	double end = now() + seconds;
	while (now() < end && !(sigpending(&pending) == 0 && sigismember(&pending, SIGUSR1) == 1))
		usleep(1000);
	return 0;
}
