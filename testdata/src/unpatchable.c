/*
 * unpatchable: a traced function that cannot take a 5-byte jump patch at its
 * entry, beside ordinary ones.
 *
 *   unpatchable [ROUNDS]                   (default 1000)
 *
 *   main -> plain_a x ROUNDS, plain_b x 2*ROUNDS, spin_back x ROUNDS/10
 *
 * spin_back is written in assembly (a global STT_FUNC symbol with a size,
 * no endbr64, plain .cfi so unwinders can walk through it):
 *
 *   +0  31 c0      xor  %eax,%eax
 *   +2  83 c0 01   1: add $1,%eax        <- loop target, inside bytes 0..4
 *   +5  39 f8      cmp  %edi,%eax
 *   +7  7c f9      jl   1b
 *   +9  c3         ret
 *
 * It returns max(n, 1) for spin_back(n).  The jl at +7 branches to +2, into
 * the first 5 bytes, so overwriting them with a jmp rel32 would make every
 * loop iteration jump into the middle of that jmp: a profiler must refuse
 * the patch and trace spin_back some other way (or report it untraced),
 * and must still count it exactly.  The test in internal/workload checks
 * these bytes in the built binary.
 *
 * Counts (default run): main 1, plain_a 1000, plain_b 2000, spin_back 100,
 * none recursive.  spin_back's calls are counted at its call site (the
 * selfcheck macros cannot go inside assembly).  stdout is one line
 * "unpatchable: rounds=R result=<hex>"; the result is checked against a
 * reference computed without calls (exit 1 if it differs, 2 on bad
 * arguments).
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(plain_a, "plain_a")                                                  \
	X(plain_b, "plain_b")                                                  \
	X(spin_back, "spin_back")
#include "selfcheck.h"

#define DEFAULT_ROUNDS 1000
#define SPIN_EVERY 10

/* int spin_back(int n): counts eax up to n (at least once); returns it. */
__asm__(".pushsection .text\n"
	".globl spin_back\n"
	".type spin_back, @function\n"
	".p2align 4\n"
	"spin_back:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"       /* +0: 31 c0 */
	"1:\n"
	"\taddl $1, %eax\n"         /* +2: 83 c0 01, the loop target */
	"\tcmpl %edi, %eax\n"       /* +5: 39 f8 */
	"\tjl 1b\n"                 /* +7: 7c f9 */
	"\tret\n"                   /* +9: c3 */
	".cfi_endproc\n"
	".size spin_back, . - spin_back\n"
	".popsection\n");
int spin_back(int n);

TRACED unsigned long plain_a(unsigned long x)
{
	SC_ENTER(plain_a);
	unsigned long r = (x ^ (x >> 31)) * 0x7fb5d329728ea185ul;
	SC_LEAVE(plain_a);
	return r;
}

TRACED unsigned long plain_b(unsigned long x)
{
	SC_ENTER(plain_b);
	unsigned long r = (x ^ (x >> 27)) * 0x81dadef4bc2dd44dul;
	SC_LEAVE(plain_b);
	return r;
}

SC_INLINE unsigned long round_ref(long i)
{
	unsigned long x = (unsigned long)i, h;
	h = (x ^ (x >> 31)) * 0x7fb5d329728ea185ul;
	h += ((2 * x) ^ ((2 * x) >> 27)) * 0x81dadef4bc2dd44dul;
	h += ((2 * x + 1) ^ ((2 * x + 1) >> 27)) * 0x81dadef4bc2dd44dul;
	if (i % SPIN_EVERY == 0)
		h += (unsigned long)(i < 1 ? 1 : i);
	return h;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long rounds = DEFAULT_ROUNDS;
	if (argc > 2) {
		fprintf(stderr, "usage: unpatchable [ROUNDS]\n");
		SC_LEAVE(main);
		return 2;
	}
	if (argc == 2) {
		char *end;
		rounds = strtol(argv[1], &end, 10);
		if (argv[1][0] == '\0' || *end != '\0' || rounds < 0 ||
		    rounds > 1000000000) {
			fprintf(stderr, "usage: unpatchable [ROUNDS]\n");
			SC_LEAVE(main);
			return 2;
		}
	}

	unsigned long sum = 0, want = 0;
	for (long i = 0; i < rounds; i++) {
		unsigned long x = (unsigned long)i;
		unsigned long h = plain_a(x);
		h += plain_b(2 * x);
		h += plain_b(2 * x + 1);
		if (i % SPIN_EVERY == 0) {
			/* spin_back is assembly: count its call here. */
			SC_ENTER(spin_back);
			h += (unsigned long)spin_back((int)i);
			SC_LEAVE(spin_back);
		}
		sum = sum * 31 + h;
		want = want * 31 + round_ref(i);
	}
	printf("unpatchable: rounds=%ld result=%016lx\n", rounds, sum);
	int code = 0;
	if (sum != want) {
		fprintf(stderr, "unpatchable: wrong result %016lx, want %016lx\n",
			sum, want);
		code = 1;
	}
	SC_LEAVE(main);
	return sc_finish(code);
}
