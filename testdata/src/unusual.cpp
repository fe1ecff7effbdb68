/*
 * unusual: control flow that does not return normally (C++).
 *
 * Exceptions:  exception_test -> exc::thrower_a -> exc::thrower_b ->
 *              exc::thrower_c, which throws (3 times, caught in
 *              exception_test), then once more without throwing.
 *              thrower_a/b/c: 4 calls each, none recursive (the frames the
 *              exception unwound are gone).
 * longjmp:     longjmp_test -> ljmp_a -> ljmp_b -> ljmp_c, which longjmps
 *              back to longjmp_test (2 times), then once without jumping.
 *              ljmp_a/b/c: 3 calls each, none recursive.
 * Signals:     signal_test installs on_sigusr1 with sigaction; raise(SIGUSR1)
 *              runs on_sigusr1 -> in_handler(0); then in_handler(1) raises
 *              SIGUSR1 from inside itself, so the handler's in_handler call
 *              begins while in_handler is on the stack: in_handler 3 calls,
 *              1 recursive; on_sigusr1 2 calls.
 *
 * exception_test and exc::thrower_* have C++ (mangled) names, shown
 * demangled with their parameter lists; the others are extern "C".
 */
#define SC_FUNCTIONS(X)                                                        \
	X(main, "main")                                                        \
	X(exception_test, "exception_test()")                                  \
	X(thrower_a, "exc::thrower_a(int)")                                    \
	X(thrower_b, "exc::thrower_b(int)")                                    \
	X(thrower_c, "exc::thrower_c(int)")                                    \
	X(longjmp_test, "longjmp_test")                                        \
	X(ljmp_a, "ljmp_a")                                                    \
	X(ljmp_b, "ljmp_b")                                                    \
	X(ljmp_c, "ljmp_c")                                                    \
	X(signal_test, "signal_test")                                          \
	X(on_sigusr1, "on_sigusr1")                                            \
	X(in_handler, "in_handler")
#include "selfcheck.h"

#include <setjmp.h>
#include <signal.h>

/* ---- exceptions ---- */

struct Boom {
	int depth;
};

namespace exc {

TRACED int thrower_c(int do_throw)
{
	SC_SCOPE(thrower_c);
	if (do_throw)
		throw Boom{3};
	return 3;
}

TRACED int thrower_b(int do_throw)
{
	SC_SCOPE(thrower_b);
	return thrower_c(do_throw) + 2;
}

TRACED int thrower_a(int do_throw)
{
	SC_SCOPE(thrower_a);
	return thrower_b(do_throw) + 1;
}

} // namespace exc

TRACED int exception_test()
{
	SC_SCOPE(exception_test);
	int caught = 0;
	for (int i = 0; i < 3; i++) {
		try {
			exc::thrower_a(1);
		} catch (const Boom &b) {
			if (b.depth == 3)
				caught++;
		}
	}
	int r = exc::thrower_a(0);
	return caught == 3 && r == 6;
}

/* ---- longjmp ---- */

static jmp_buf jump_buffer;

extern "C" {

TRACED void ljmp_c(int jump)
{
	SC_ENTER(ljmp_c);
	if (jump)
		longjmp(jump_buffer, 1);
	SC_LEAVE(ljmp_c);
}

TRACED void ljmp_b(int jump)
{
	SC_ENTER(ljmp_b);
	ljmp_c(jump);
	SC_LEAVE(ljmp_b);
}

TRACED void ljmp_a(int jump)
{
	SC_ENTER(ljmp_a);
	ljmp_b(jump);
	SC_LEAVE(ljmp_a);
}

TRACED int longjmp_test(void)
{
	SC_ENTER(longjmp_test);
	volatile int jumps = 0;
	for (volatile int i = 0; i < 2; i++) {
		struct sc_depths saved;
		sc_save_depths(&saved);
		if (setjmp(jump_buffer) == 0) {
			ljmp_a(1);
		} else {
			/* the frames of ljmp_a/b/c are gone */
			sc_restore_depths(&saved);
			jumps = jumps + 1;
		}
	}
	ljmp_a(0);
	SC_LEAVE(longjmp_test);
	return jumps == 2;
}

/* ---- signals ---- */

static volatile sig_atomic_t handled;

TRACED void in_handler(int raise_again)
{
	SC_ENTER(in_handler);
	if (raise_again)
		raise(SIGUSR1); /* runs the handler before returning */
	handled = handled + 1;
	SC_LEAVE(in_handler);
}

TRACED void on_sigusr1(int sig)
{
	SC_ENTER(on_sigusr1);
	if (sig == SIGUSR1)
		in_handler(0);
	SC_LEAVE(on_sigusr1);
}

TRACED int signal_test(void)
{
	SC_ENTER(signal_test);
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	int ok = sigaction(SIGUSR1, &sa, &old) == 0;
	raise(SIGUSR1);
	in_handler(1);
	sigaction(SIGUSR1, &old, NULL);
	SC_LEAVE(signal_test);
	return ok && handled == 3;
}

} // extern "C"

int main(int argc, char **argv)
{
	SC_ENTER(main);
	SC_INIT(argc, argv);
	int exc_ok = exception_test();
	int jmp_ok = longjmp_test();
	int sig_ok = signal_test();
	printf("unusual: exceptions %s, longjmp %s, signals %s\n",
	       exc_ok ? "ok" : "FAILED", jmp_ok ? "ok" : "FAILED",
	       sig_ok ? "ok" : "FAILED");
	SC_LEAVE(main);
	return sc_finish(exc_ok && jmp_ok && sig_ok ? 0 : 1);
}
