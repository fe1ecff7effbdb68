/*
 * hottrap: breakpoints on hot paths (issue: a breakpoint never slows a hot
 * path).
 *
 *   hottrap [HOT [PASSES [JUMPS]]]  (defaults 5000, 100000, 3000)
 *
 *   main -> spin x HOT                   (assembly, no inline probe fits)
 *        -> join x PASSES -> rare x ceil(PASSES/1024)
 *        -> setjmp (libc's _setjmp) x JUMPS, each followed by a longjmp
 *           back into it on every other one
 *
 * spin and rare are assembly whose loop branches back into their first 5
 * bytes (as trapcost's loop_head), and their addresses are kept in data
 * (keep), so their call sites may not be all there is: under --probes
 * auto they get trap probes. spin is called HOT times in a row, fast: a profiler that keeps
 * its breakpoint takes two stops a call. join calls rare when i % 1024 is
 * 0, and its code after that call is where the other path lands too:
 *
 *   join:   53           push %rbx
 *           31 c0        xor %eax,%eax
 *           f7 c7 ff 03 00 00  test $0x3ff,%edi
 *           75 xx        jnz 1f
 *           e8 ..        call rare
 *        1: 5b           pop %rbx     <- rare's return site, and the jnz's target
 *           c3           ret
 *
 * so a breakpoint left at rare's return site stops every join call.
 * setjmp returns twice: a profiler keeps a breakpoint on it, hot here.
 * spin(n) and rare(n) return 3, join returns rare's value or 0. Counts
 * (defaults): main 1, spin 5000, join 100000, rare 98 (counted at the call
 * sites: the selfcheck macros cannot go inside assembly). stdout is
 * "hottrap: result=<n>", checked against the sum computed without calls
 * (exit 1 if it differs, 2 on bad arguments).
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(spin, "spin")                                                        \
	X(join, "join")                                                        \
	X(rare, "rare")
#include "selfcheck.h"

#include <setjmp.h>

/* main calls setjmp; nothing it keeps in registers lives across a longjmp. */
#pragma GCC diagnostic ignored "-Wclobbered"

#define DEFAULT_HOT 5000
#define DEFAULT_PASSES 100000

__asm__(".pushsection .text\n"
	".globl spin\n"
	".type spin, @function\n"
	".p2align 4\n"
	"spin:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"
	"1:\n"
	"\taddl $1, %eax\n"
	"\tcmpl $3, %eax\n"
	"\tjl 1b\n"
	"\tret\n"
	".cfi_endproc\n"
	".size spin, . - spin\n"
	".globl rare\n"
	".type rare, @function\n"
	".p2align 4\n"
	"rare:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"
	"1:\n"
	"\taddl $1, %eax\n"
	"\tcmpl $3, %eax\n"
	"\tjl 1b\n"
	"\tret\n"
	".cfi_endproc\n"
	".size rare, . - rare\n"
	".globl join\n"
	".type join, @function\n"
	".p2align 4\n"
	"join:\n"
	".cfi_startproc\n"
	"\tpushq %rbx\n"
	"\t.cfi_def_cfa_offset 16\n"
	"\txorl %eax, %eax\n"
	"\ttestl $0x3ff, %edi\n"
	"\tjnz 1f\n"
	"\tcall rare\n"
	"1:\n"
	"\tpopq %rbx\n"
	"\t.cfi_def_cfa_offset 8\n"
	"\tret\n"
	".cfi_endproc\n"
	".size join, . - join\n"
	".popsection\n");
int spin(int n);
int rare(int n);
int join(int i);

/* Their addresses in data: a call through a pointer could reach them. */
int (*volatile keep[2])(int) = {spin, rare};

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long hot = DEFAULT_HOT, passes = DEFAULT_PASSES, jumps = 3000;
	if (argc > 4 || (argc > 1 && (hot = sc_arg(argv[1], 1000000000)) < 0) ||
	    (argc > 2 && (passes = sc_arg(argv[2], 1000000000)) < 0) ||
	    (argc > 3 && (jumps = sc_arg(argv[3], 1000000000)) < 0)) {
		fprintf(stderr, "usage: hottrap [HOT [PASSES [JUMPS]]]\n");
		SC_LEAVE(main);
		return 2;
	}
	long sum = 0, want = 0;
	for (long i = 0; i < hot; i++) {
		/* Assembly: counted here. */
		SC_ENTER(spin);
		sum += spin((int)i);
		SC_LEAVE(spin);
		want += 3;
	}
	for (long i = 0; i < passes; i++) {
		SC_ENTER(join);
		if (i % 1024 == 0) {
			SC_ENTER(rare);
			SC_LEAVE(rare);
			want += 3;
		}
		sum += join((int)i);
		SC_LEAVE(join);
	}
	for (volatile long i = 0; i < jumps; i++) {
		static jmp_buf env;
		volatile int again = 0;
		if (setjmp(env) == 0 && i % 2 == 0 && !again) {
			again = 1;
			longjmp(env, 1);
		}
	}
	printf("hottrap: result=%ld\n", sum);
	SC_LEAVE(main);
	return sc_finish(sum != want ? 1 : 0);
}
