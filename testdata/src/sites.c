/*
 * sites: functions whose first bytes cannot take an inline probe's jump,
 * probed at their call sites instead (every branch to them is direct).
 *
 *   sites [N [SECONDS]]             (defaults 100000, no time limit)
 *
 *   main -> loop_entry x N                   (call)
 *        -> via_tail x N/10 -> loop_entry    (tail call: jmp rel32)
 *        -> tiny x N
 *        -> after_tiny x N
 *
 * All but main are assembly:
 *
 *   loop_entry:  31 c0     xor %eax,%eax
 *             1: 83 c0 01  add $1,%eax   <- loop target, inside 0..4
 *                83 f8 03  cmp $3,%eax
 *                7c f8     jl 1b
 *                c3        ret
 *   via_tail:    83 c7 00  add $0,%edi
 *                e9 ..     jmp loop_entry   (rel32, spelled out: an
 *                                            assembler would pick rel8)
 *   tiny:        31 c0     xor %eax,%eax
 *                c3        ret               3 bytes, and after_tiny's
 *   after_tiny:  8d 47 01  lea 1(%rdi),%eax  code right behind them
 *                c3        ret
 *
 * loop_entry(n) returns 3, tiny() 0, after_tiny(n) n+1. Counts (default):
 * main 1, loop_entry 110000, via_tail 10000, tiny 100000, after_tiny
 * 100000 (counted at the call sites: the selfcheck macros cannot go
 * inside assembly). stdout is "sites: result=<n>", checked against the
 * sum computed without calls (exit 1 if it differs, 2 on bad arguments).
 * With SECONDS, the loop also ends once that many seconds have passed (the
 * clock read every 65536 iterations): then the counts are the iterations
 * done. SIGUSR1 ends it too (at the next clock read), so a test that needs
 * the process for a while can give it a generous SECONDS and still end it
 * well, as soon as it is done.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(loop_entry, "loop_entry")                                            \
	X(via_tail, "via_tail")                                                \
	X(tiny, "tiny")                                                        \
	X(after_tiny, "after_tiny")
#include "selfcheck.h"

#include <signal.h>
#include <time.h>

__asm__(".pushsection .text\n"
	".globl loop_entry\n"
	".type loop_entry, @function\n"
	".p2align 4\n"
	"loop_entry:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"
	"1:\n"
	"\taddl $1, %eax\n"
	"\tcmpl $3, %eax\n"
	"\tjl 1b\n"
	"\tret\n"
	".cfi_endproc\n"
	".size loop_entry, . - loop_entry\n"
	".globl via_tail\n"
	".type via_tail, @function\n"
	".p2align 4\n"
	"via_tail:\n"
	".cfi_startproc\n"
	"\taddl $0, %edi\n"
	"\t.byte 0xe9\n"
	"\t.long loop_entry - . - 4\n"
	".cfi_endproc\n"
	".size via_tail, . - via_tail\n"
	".globl tiny\n"
	".type tiny, @function\n"
	".p2align 4\n"
	"tiny:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"
	"\tret\n"
	".cfi_endproc\n"
	".size tiny, . - tiny\n"
	".globl after_tiny\n"
	".type after_tiny, @function\n"
	"after_tiny:\n"
	".cfi_startproc\n"
	"\tleal 1(%rdi), %eax\n"
	"\tret\n"
	".cfi_endproc\n"
	".size after_tiny, . - after_tiny\n"
	".popsection\n");
int loop_entry(int n);
int via_tail(int n);
int tiny(void);
int after_tiny(int n);

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long n = 100000, seconds = 0;
	if (argc > 3 || (argc > 1 && (n = sc_arg(argv[1], 1000000000)) < 0) ||
	    (argc > 2 && (seconds = sc_arg(argv[2], 1000000000)) < 0)) {
		fprintf(stderr, "usage: sites [N [SECONDS]]\n");
		SC_LEAVE(main);
		return 2;
	}
	long sum = 0, want = 0;
	struct timespec t0, now;
	/* SIGUSR1 is blocked and polled where the clock is read: a handler
	 * would be a function the expected counts do not list. */
	sigset_t usr1, pending;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		if (seconds > 0 && (i & 0xffff) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) >= seconds * 1000000000L ||
			    (sigpending(&pending) == 0 && sigismember(&pending, SIGUSR1) == 1))
				break;
		}
		/* Assembly: counted here. */
		SC_ENTER(loop_entry);
		sum += loop_entry((int)i);
		SC_LEAVE(loop_entry);
		want += 3;
		if (i % 10 == 0) {
			SC_ENTER(via_tail);
			SC_ENTER(loop_entry);
			sum += via_tail((int)i);
			SC_LEAVE(loop_entry);
			SC_LEAVE(via_tail);
			want += 3;
		}
		SC_ENTER(tiny);
		sum += tiny();
		SC_LEAVE(tiny);
		SC_ENTER(after_tiny);
		sum += after_tiny((int)(i & 0xffff));
		SC_LEAVE(after_tiny);
		want += (i & 0xffff) + 1;
	}
	printf("sites: result=%ld\n", sum);
	SC_LEAVE(main);
	return sc_finish(sum != want ? 1 : 0);
}
