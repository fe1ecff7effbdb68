/*
 * wide: a C++ program of 348 traced functions, for drawings of large call
 * graphs (render must stay readable): templates, a lambda, an operator and
 * namespaces, with long demangled names and uneven work.
 *
 *   wide [ROUNDS]                          (default 1)
 *
 *   main -> wide::run_all(long)
 *     -> wide::Mod<M>::run(long) for M = 0..7, ROUNDS times each
 *        -> long wide::Mod<M>::stage<S>(long) for S = 0..5
 *           -> wide::Leaf<M, S, L>::apply(long) for L = 0..5
 *        then wide::run_all(long)::{lambda(long)#1}::operator()(long) const
 *        and wide::Acc::operator+=(long) on each module's result
 *
 * Counts (default run, R = ROUNDS = 1): main 1, wide::run_all(long) 1,
 * each Mod<M>::run R, each stage R, each Leaf<M, S, L>::apply R, the
 * lambda 8R, operator+= 8R; none recursive.  A leaf spins a fixed loop
 * whose length depends on (M, S, L) only: every 11th leaf (in M*7 + S*3 +
 * L) works 40 times as long as the lightest (about 0.2 ms here), so the
 * times are uneven and much longer than a traced call's overhead.
 *
 * stdout: "wide: rounds=R result=<16 hex digits>", the same on every run;
 * about 0.4 s untraced.
 * Exit 0, 2 on bad arguments.
 */
#define SC_MAX 512 /* more functions than selfcheck.h's default table */

#define WIDE_LEAVES(X, M, S)                                                   \
	X(lf_##M##_##S##_0, "wide::Leaf<" #M ", " #S ", 0>::apply(long)")      \
	X(lf_##M##_##S##_1, "wide::Leaf<" #M ", " #S ", 1>::apply(long)")      \
	X(lf_##M##_##S##_2, "wide::Leaf<" #M ", " #S ", 2>::apply(long)")      \
	X(lf_##M##_##S##_3, "wide::Leaf<" #M ", " #S ", 3>::apply(long)")      \
	X(lf_##M##_##S##_4, "wide::Leaf<" #M ", " #S ", 4>::apply(long)")      \
	X(lf_##M##_##S##_5, "wide::Leaf<" #M ", " #S ", 5>::apply(long)")

/* One module: run, its six stages, then its 36 leaves stage by stage, so
 * that the ids are run + 1 + S for a stage and run + 7 + 6S + L for a
 * leaf (checked below). */
#define WIDE_MODULE(X, M)                                                      \
	X(run_##M, "wide::Mod<" #M ">::run(long)")                             \
	X(st_##M##_0, "long wide::Mod<" #M ">::stage<0>(long)")                \
	X(st_##M##_1, "long wide::Mod<" #M ">::stage<1>(long)")                \
	X(st_##M##_2, "long wide::Mod<" #M ">::stage<2>(long)")                \
	X(st_##M##_3, "long wide::Mod<" #M ">::stage<3>(long)")                \
	X(st_##M##_4, "long wide::Mod<" #M ">::stage<4>(long)")                \
	X(st_##M##_5, "long wide::Mod<" #M ">::stage<5>(long)")                \
	WIDE_LEAVES(X, M, 0)                                                   \
	WIDE_LEAVES(X, M, 1)                                                   \
	WIDE_LEAVES(X, M, 2)                                                   \
	WIDE_LEAVES(X, M, 3)                                                   \
	WIDE_LEAVES(X, M, 4)                                                   \
	WIDE_LEAVES(X, M, 5)

#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(run_all, "wide::run_all(long)")                                      \
	X(lambda, "wide::run_all(long)::{lambda(long)#1}::operator()(long) const") \
	X(acc_add, "wide::Acc::operator+=(long)")                              \
	WIDE_MODULE(X, 0)                                                      \
	WIDE_MODULE(X, 1)                                                      \
	WIDE_MODULE(X, 2)                                                      \
	WIDE_MODULE(X, 3)                                                      \
	WIDE_MODULE(X, 4)                                                      \
	WIDE_MODULE(X, 5)                                                      \
	WIDE_MODULE(X, 6)                                                      \
	WIDE_MODULE(X, 7)
#include "selfcheck.h"

#define PER_MODULE 43 /* run, 6 stages, 36 leaves */
static_assert(SC_ID_run_1 == SC_ID_run_0 + PER_MODULE, "module layout");
static_assert(SC_ID_st_3_5 == SC_ID_run_3 + 1 + 5, "stage layout");
static_assert(SC_ID_lf_7_5_5 == SC_ID_run_7 + 7 + 6 * 5 + 5, "leaf layout");
static_assert(SC_NFUNCS == 4 + 8 * PER_MODULE, "348 functions");

namespace wide {

/* Leaf<M, S, L>: a fixed loop, long for every 11th (M, S, L). */
template <int M, int S, int L> struct Leaf {
	TRACED static long apply(long x)
	{
		sc_guard g(SC_ID_run_0 + PER_MODULE * M + 7 + 6 * S + L);
		constexpr int k = M * 7 + S * 3 + L;
		constexpr long n = 200000L * (k % 11 == 0 ? 40 : 1 + k % 4);
		unsigned long h = (unsigned long)x ^ (unsigned long)k;
		for (long i = 0; i < n; i++) {
			h = h * 6364136223846793005ul + 1442695040888963407ul;
			SC_BARRIER();
		}
		return (long)(h >> 1);
	}
};

template <int M> struct Mod {
	template <int S> TRACED static long stage(long x)
	{
		sc_guard g(SC_ID_run_0 + PER_MODULE * M + 1 + S);
		long r = x;
		r ^= Leaf<M, S, 0>::apply(r);
		r ^= Leaf<M, S, 1>::apply(r);
		r ^= Leaf<M, S, 2>::apply(r);
		r ^= Leaf<M, S, 3>::apply(r);
		r ^= Leaf<M, S, 4>::apply(r);
		r ^= Leaf<M, S, 5>::apply(r);
		SC_BARRIER();
		return r;
	}

	TRACED static long run(long x)
	{
		sc_guard g(SC_ID_run_0 + PER_MODULE * M);
		long r = x;
		r = stage<0>(r);
		r = stage<1>(r);
		r = stage<2>(r);
		r = stage<3>(r);
		r = stage<4>(r);
		r = stage<5>(r);
		SC_BARRIER();
		return r;
	}
};

struct Acc {
	unsigned long sum;
	TRACED Acc &operator+=(long x);
};

Acc &Acc::operator+=(long x)
{
	SC_SCOPE(acc_add);
	sum = (sum ^ (unsigned long)x) * 0x100000001b3ul;
	return *this;
}

TRACED unsigned long run_all(long rounds)
{
	SC_SCOPE(run_all);
	auto fold = [](long x) TRACED -> long {
		SC_SCOPE(lambda);
		return x ^ (x >> 7);
	};
	Acc acc{0xcbf29ce484222325ul};
	for (long i = 0; i < rounds; i++) {
		acc += fold(Mod<0>::run(i));
		acc += fold(Mod<1>::run(i));
		acc += fold(Mod<2>::run(i));
		acc += fold(Mod<3>::run(i));
		acc += fold(Mod<4>::run(i));
		acc += fold(Mod<5>::run(i));
		acc += fold(Mod<6>::run(i));
		acc += fold(Mod<7>::run(i));
	}
	return acc.sum;
}

} // namespace wide

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long rounds = 1;
	if (argc > 2) {
		fprintf(stderr, "usage: wide [ROUNDS]\n");
		SC_LEAVE(main);
		return 2;
	}
	if (argc == 2) {
		char *end;
		rounds = strtol(argv[1], &end, 10);
		if (argv[1][0] == '\0' || *end != '\0' || rounds < 0 || rounds > 1000000) {
			fprintf(stderr, "usage: wide [ROUNDS]\n");
			SC_LEAVE(main);
			return 2;
		}
	}
	unsigned long result = wide::run_all(rounds);
	printf("wide: rounds=%ld result=%016lx\n", rounds, result);
	fflush(stdout);
	SC_LEAVE(main);
	return sc_finish(0);
}
