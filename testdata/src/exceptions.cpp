/*
 * exceptions: C++ exceptions thrown through ten traced frames, many times,
 * and glibc backtrace() from inside traced frames (C++).
 *
 *   exceptions [THROWS]                    (default 10000)
 *
 *   main -> catcher(THROWS): THROWS times, in a try/catch,
 *           f0 -> f1 -> ... -> f9, which throws std::runtime_error("f9");
 *           the exception unwinds all ten frames into catcher.
 *   main -> f0(-1) -> f1 -> ... -> f9(-1) -> bt_probe(): no exception;
 *           bt_probe calls backtrace() with twelve traced frames on the stack.
 *
 * Counts (default run): main 1, catcher(int) 1, f0(int) ... f9(int) 10001
 * each, bt_probe() 1, none recursive (frames an exception unwound are gone).
 * The names are C++ (mangled in the binary), shown demangled: "f0(int)".
 *
 * stdout, identical from run to run whatever the load addresses (ASLR):
 *   exceptions: caught=10000
 *   backtrace: frames=N checksum=<16 hex digits>
 *   bt I MODULE+0xOFFSET                     (one line per frame, I = 0..N-1)
 * where MODULE is "exe" for the main executable (whatever its path), else
 * the base name of the shared object (libc.so.6), and OFFSET is the return
 * address relative to that module's load base (dladdr).  The checksum
 * hashes N and every (MODULE, OFFSET).  A profiler that leaves return
 * addresses alone (no return trampolines visible to the program's own
 * unwinding) gives exactly the same stdout traced as untraced: tests compare
 * the two (stdout is flushed before the self-check report is written).
 * bt_probe also checks the frames itself: frame 0 in bt_probe, frames 1..10
 * in f9, f8, ..., f0 (each return address at most 4 KiB after its
 * function's start), frame 11 in the main executable (main's frame); a
 * mismatch prints "backtrace: frames not as expected" on stderr and the
 * exit status is 1 (also 1 if an exception was not caught, 2 on bad
 * arguments).  With the default build, frames 12..14 are libc's
 * __libc_start_call_main and __libc_start_main, and _start: N = 15.
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(catcher, "catcher(int)")                                             \
	X(f0, "f0(int)")                                                       \
	X(f1, "f1(int)")                                                       \
	X(f2, "f2(int)")                                                       \
	X(f3, "f3(int)")                                                       \
	X(f4, "f4(int)")                                                       \
	X(f5, "f5(int)")                                                       \
	X(f6, "f6(int)")                                                       \
	X(f7, "f7(int)")                                                       \
	X(f8, "f8(int)")                                                       \
	X(f9, "f9(int)")                                                       \
	X(bt_probe, "bt_probe()")
#include "selfcheck.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <stdexcept>

#define DEFAULT_THROWS 10000
#define MAX_FRAMES 64

TRACED int bt_probe();

/* f9 throws for x >= 0; for x < 0 it returns bt_probe()'s verdict. */
TRACED int f9(int x)
{
	SC_SCOPE(f9);
	if (x >= 0)
		throw std::runtime_error("f9");
	return bt_probe();
}

/* fK(x) = f(K+1)(x) + 0: not a tail call (the flags forbid sibling calls and
 * the SC_SCOPE guard's destructor runs after the call). */
#define FN(k, next)                                                            \
	TRACED int f##k(int x)                                                 \
	{                                                                      \
		SC_SCOPE(f##k);                                                \
		int r = next(x);                                               \
		SC_BARRIER();                                                  \
		return r;                                                      \
	}
FN(8, f9)
FN(7, f8)
FN(6, f7)
FN(5, f6)
FN(4, f5)
FN(3, f4)
FN(2, f3)
FN(1, f2)
FN(0, f1)
#undef FN

TRACED long catcher(int throws)
{
	SC_SCOPE(catcher);
	long caught = 0;
	for (int i = 0; i < throws; i++) {
		try {
			f0(i);
		} catch (const std::runtime_error &e) {
			if (strcmp(e.what(), "f9") == 0)
				caught++;
		}
	}
	return caught;
}

typedef int (*fn_t)(int);

TRACED int bt_probe()
{
	SC_SCOPE(bt_probe);
	void *frames[MAX_FRAMES];
	int n = backtrace(frames, MAX_FRAMES);

	Dl_info self;
	if (dladdr((void *)&bt_probe, &self) == 0) {
		fprintf(stderr, "backtrace: dladdr failed\n");
		return 0;
	}
	unsigned long sum = 0xcbf29ce484222325ul ^ (unsigned long)n;
	printf("backtrace: frames=%d", n);
	char lines[MAX_FRAMES][128];
	for (int i = 0; i < n; i++) {
		Dl_info info;
		const char *mod = "?";
		unsigned long off = (unsigned long)frames[i];
		if (dladdr(frames[i], &info) != 0) {
			off = (unsigned long)frames[i] -
			      (unsigned long)info.dli_fbase;
			if (info.dli_fbase == self.dli_fbase) {
				mod = "exe";
			} else if (info.dli_fname) {
				const char *slash = strrchr(info.dli_fname, '/');
				mod = slash ? slash + 1 : info.dli_fname;
			}
		}
		for (const char *c = mod; *c; c++)
			sum = (sum ^ (unsigned char)*c) * 0x100000001b3ul;
		sum = (sum ^ off) * 0x100000001b3ul;
		snprintf(lines[i], sizeof lines[i], "bt %d %s+0x%lx", i, mod, off);
	}
	printf(" checksum=%016lx\n", sum);
	for (int i = 0; i < n; i++)
		printf("%s\n", lines[i]);

	/* frames[0] is in bt_probe, frames[1..10] in f9..f0 (a return
	 * address lies after its function's start and, these functions being
	 * small, less than 4 KiB after it), frames[11] in main, in the main
	 * executable. */
	static const fn_t fs[] = {f9, f8, f7, f6, f5, f4, f3, f2, f1, f0};
	int ok = n >= 12;
	for (int i = 0; ok && i <= 10; i++) {
		unsigned long start = i == 0 ? (unsigned long)(void *)&bt_probe
					     : (unsigned long)(void *)fs[i - 1];
		unsigned long ra = (unsigned long)frames[i];
		if (ra <= start || ra - start >= 4096)
			ok = 0;
	}
	Dl_info m;
	if (ok && (dladdr(frames[11], &m) == 0 || m.dli_fbase != self.dli_fbase))
		ok = 0;
	if (!ok)
		fprintf(stderr, "backtrace: frames not as expected\n");
	return ok;
}

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	long throws = DEFAULT_THROWS;
	if (argc > 2) {
		fprintf(stderr, "usage: exceptions [THROWS]\n");
		SC_LEAVE(main);
		return 2;
	}
	if (argc == 2) {
		char *end;
		throws = strtol(argv[1], &end, 10);
		if (argv[1][0] == '\0' || *end != '\0' || throws < 0 ||
		    throws > 1000000000) {
			fprintf(stderr, "usage: exceptions [THROWS]\n");
			SC_LEAVE(main);
			return 2;
		}
	}

	long caught = catcher((int)throws);
	printf("exceptions: caught=%ld\n", caught);
	int bt_ok = f0(-1);
	fflush(stdout);
	SC_LEAVE(main);
	return sc_finish(caught == throws && bt_ok ? 0 : 1);
}
