// calls.c exercises the symbol, PLT and call-site code of package
// instrument: direct, indirect (function pointer, table) and PLT calls,
// aliases, a mangled C++ name and a blocking libc call. With an argument
// "wait" it prints the runtime addresses of main and usleep and then blocks
// reading stdin, so a test can read its /proc/PID/maps.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }

// Aliases: the collapsed name must be "aliased": "_a" is shorter but has a
// leading underscore, "w" is shorter but WEAK, "aliased_impl" is longer.
int aliased_impl(int x) { return leaf(x) + 2; }
int _a(int) __attribute__((alias("aliased_impl")));
int aliased(int) __attribute__((alias("aliased_impl")));
int w(int) __attribute__((weak, alias("aliased_impl")));

// A C++-mangled name without needing a C++ compiler: ns::f(int).
__attribute__((noinline)) int cxx_f(int x) __asm__("_ZN2ns1fEi");
int cxx_f(int x) { return leaf(x) - 1; }

static int (*volatile fp)(int) = leaf;
static int (*volatile table[2])(int) = {leaf, aliased_impl};

int main(int argc, char **argv) {
	int n = fp(argc);                // indirect through a register
	n += table[argc & 1](n);         // indirect through memory
	n += cxx_f(n) + aliased_impl(n);    // direct
	if (argc > 1 && strcmp(argv[1], "wait") == 0) {
		printf("main=%p usleep=%p\n", (void *)main, dlsym(RTLD_DEFAULT, "usleep"));
		fflush(stdout);
		char buf[1];
		n += (int)read(0, buf, 1);   // blocks until the test closes stdin
	}
	usleep(1);                       // PLT (or GOT with -fno-plt)
	return n == 12345;
}
