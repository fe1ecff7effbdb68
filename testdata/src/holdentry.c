/*
 * holdentry: a thread inside the first bytes of a function whose loop
 * branches back into them, while a profiler attaches.
 *
 *   holdentry MS           main -> hold (spins for MS ms), then hold x 1000
 *
 * hold is assembly that spins in its first bytes until go is set
 * (on_alarm, a SIGALRM handler, sets it MS ms after the start):
 *
 *   hold:   31 c0     xor %eax,%eax
 *        1: f3 90     pause           <- loop target, inside 0..4
 *           83 3d ..  cmpl $0,go(%rip)
 *           74 f5     je 1b
 *           c3        ret
 *
 * so a profiler attaching meanwhile finds the thread inside hold's first
 * bytes, which an entry patch would overwrite. Counts: main 1, hold 1001
 * (counted at the call site: the selfcheck macros cannot go inside
 * assembly), on_alarm 1. stdout "holdentry: held". Exit 2 on bad
 * arguments.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(hold, "hold")                                                        \
	X(on_alarm, "on_alarm")
#include "selfcheck.h"

#include <signal.h>
#include <sys/time.h>

volatile int go;

__asm__(".pushsection .text\n"
	".globl hold\n"
	".type hold, @function\n"
	".p2align 4\n"
	"hold:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"
	"1:\n"
	"\tpause\n"
	"\tcmpl $0, go(%rip)\n"
	"\tje 1b\n"
	"\tret\n"
	".cfi_endproc\n"
	".size hold, . - hold\n"
	".popsection\n");
int hold(void);

TRACED void on_alarm(int sig)
{
	SC_ENTER(on_alarm);
	(void)sig;
	go = 1;
	SC_LEAVE(on_alarm);
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long ms = argc == 2 ? sc_arg(argv[1], 60000) : -1;
	if (ms <= 0) {
		fprintf(stderr, "usage: holdentry MS\n");
		SC_LEAVE(main);
		return 2;
	}
	signal(SIGALRM, on_alarm);
	struct itimerval it = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 1001; i++) {
		/* Assembly: counted here. */
		SC_ENTER(hold);
		hold();
		SC_LEAVE(hold);
	}
	printf("holdentry: held\n");
	SC_LEAVE(main);
	return sc_finish(0);
}
