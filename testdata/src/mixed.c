/*
 * mixed: recursion in several threads through functions of both probe
 * kinds, for a profile's times to add up whatever clock each event came
 * from.
 *
 *   mixed [ROUNDS [DEPTH]]               (defaults 2, 8)
 *
 *   main -> run_round x ROUNDS -> pthread_create x 2 -> worker
 *                          -> rec(DEPTH), then pthread_join x 2
 *   worker -> rec(DEPTH)
 *   rec(d) -> leaf, then rec(d-1) twice while d > 0, else spin and
 *             tail_to_spin -> (tail call) spin
 *
 * spin is assembly whose loop branches into its first 5 bytes: --probes
 * auto gives it a breakpoint. tail_to_spin is assembly with plain first
 * bytes (an inline probe) ending in `jmp spin`, as trapcost's tail_to_loop:
 * spin's frame then opens at a stop and closes at the return of an inline
 * probe.
 *
 * Every thread mixes inline-probed calls (rec, leaf, tail_to_spin), timed
 * by the target's time-stamp counter, with trap-probed ones (spin), timed
 * by the tracer at its stops, all inside a recursion.
 *
 * Counts (defaults): main 1, run_round 4, worker 8, rec 12 x (2^13 - 1) =
 * 98292 (recursive: all but the 12 outermost), leaf and spin as rec (spin
 * counted at its call site). Threads: 8 at level 1 spawned by run_round.
 * stdout is "mixed: rounds=R depth=D result=<hex>", checked against a
 * reference computed without calls (exit 1 if it differs, 2 on bad
 * arguments).
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(run_round, "run_round")                                                      \
	X(worker, "worker")                                                    \
	X(rec, "rec")                                                          \
	X(leaf, "leaf")                                                        \
	X(spin, "spin")                                                        \
	X(tail_to_spin, "tail_to_spin")
#include "selfcheck.h"

#include <pthread.h>

#define DEFAULT_ROUNDS 2
#define DEFAULT_DEPTH 8
#define THREADS 2

__asm__(".pushsection .text\n"
	".globl spin\n"
	".type spin, @function\n"
	".p2align 4\n"
	"spin:\n"
	".cfi_startproc\n"
	"\txorl %eax, %eax\n"
	"1:\n"
	"\taddl $1, %eax\n"
	"\tcmpl %edi, %eax\n"
	"\tjl 1b\n"
	"\tret\n"
	".cfi_endproc\n"
	".size spin, . - spin\n"
	".globl tail_to_spin\n"
	".type tail_to_spin, @function\n"
	".p2align 4\n"
	"tail_to_spin:\n"
	".cfi_startproc\n"
	"\taddl $0, %edi\n"
	"\txorl %ecx, %ecx\n"
	"\tjmp spin\n"
	".cfi_endproc\n"
	".size tail_to_spin, . - tail_to_spin\n"
	".popsection\n");
int spin(int n);
int tail_to_spin(int n);

TRACED unsigned long leaf(unsigned long x)
{
	SC_ENTER(leaf);
	x = x * 2654435761u + 1;
	SC_LEAVE(leaf);
	return x;
}

/* What rec(d, x) returns, without calls: its pre-order walk of a full
 * binary tree of depth d, with a stack (a recursive reference would be a
 * function of its own in the binary). */
SC_INLINE unsigned long rec_ref(int d, unsigned long x)
{
	int stack[32], n = 0;
	stack[n++] = d;
	while (n > 0) {
		int k = stack[--n];
		x = x * 2654435761u + 1;
		if (k == 0) {
			x += 2;
		} else {
			stack[n++] = k - 1;
			stack[n++] = k - 1;
		}
	}
	return x;
}

TRACED unsigned long rec(int d, unsigned long x)
{
	SC_ENTER(rec);
	x = leaf(x);
	if (d == 0) {
		/* Both assembly: count them here. */
		SC_ENTER(spin);
		x += (unsigned long)spin(d);
		SC_LEAVE(spin);
		SC_ENTER(tail_to_spin);
		SC_ENTER(spin);
		x += (unsigned long)tail_to_spin(d);
		SC_LEAVE(spin);
		SC_LEAVE(tail_to_spin);
	}
	if (d > 0) {
		x = rec(d - 1, x);
		x = rec(d - 1, x);
	}
	SC_LEAVE(rec);
	return x;
}

struct targ {
	struct sc_tinfo ti;
	int depth;
	unsigned long result;
};

TRACED void *worker(void *p)
{
	SC_ENTER(worker);
	struct targ *a = p;
	sc_thread_begin(a->ti);
	a->result = rec(a->depth, 7);
	SC_LEAVE(worker);
	return NULL;
}

TRACED unsigned long run_round(int depth)
{
	SC_ENTER(run_round);
	pthread_t th[THREADS];
	struct targ a[THREADS];
	for (int i = 0; i < THREADS; i++) {
		a[i].ti = SC_SPAWN_INFO(run_round);
		a[i].depth = depth;
		if (pthread_create(&th[i], NULL, worker, &a[i]) != 0)
			exit(3);
	}
	unsigned long x = rec(depth, 3);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		x ^= a[i].result;
	}
	SC_LEAVE(run_round);
	return x;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long rounds = DEFAULT_ROUNDS, depth = DEFAULT_DEPTH;
	if (argc > 3 || (argc > 1 && (rounds = sc_arg(argv[1], 1000000)) < 0) ||
	    (argc > 2 && (depth = sc_arg(argv[2], 24)) < 0)) {
		fprintf(stderr, "usage: mixed [ROUNDS [DEPTH]]\n");
		SC_LEAVE(main);
		return 2;
	}
	unsigned long x = 0, want = 0;
	for (long r = 0; r < rounds; r++) {
		x += run_round((int)depth);
		want += rec_ref((int)depth, 3) ^ rec_ref((int)depth, 7) ^ rec_ref((int)depth, 7);
	}
	printf("mixed: rounds=%ld depth=%ld result=%lx\n", rounds, depth, x);
	SC_LEAVE(main);
	return sc_finish(x != want ? 1 : 0);
}
