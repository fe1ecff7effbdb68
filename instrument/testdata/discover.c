/* Code shapes for callee discovery (discover_test.go), built at -O2 with
 * sibling calls on: tail calls to a function, to a PLT stub and through a
 * pointer, a switch through a jump table, and a split-off cold part. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile int sink;
int (*volatile fp)(int);

NOINLINE int leaf(int v) { sink += v; return v * 2; }
NOINLINE int other(int v) { sink -= v; return v + 3; }
NOINLINE __attribute__((cold)) int rare(int v) { sink ^= v; return v - 1; }

/* jmp leaf */
NOINLINE int tail_direct(int v) { return leaf(v + 1); }

/* jmp puts@plt */
NOINLINE int tail_plt(const char *s) { return puts(s); }

/* jmp through the pointer: an indirect tail-call site */
NOINLINE int tail_ptr(int v) { return fp(v + 1); }

/* a jump table: no indirect site */
NOINLINE int table(int v)
{
	switch (v) {
	case 0: return leaf(v) + 1;
	case 1: return other(v) + 2;
	case 2: return leaf(v + 5) * 3;
	case 3: return other(v * 7) - 4;
	case 4: sink = 9; return 5;
	case 5: return leaf(other(v)) + 6;
	case 6: sink = 11; return 7;
	case 7: return other(leaf(v)) + 8;
	}
	return 0;
}

/* the unlikely branch goes to split_cold.cold, which calls rare */
NOINLINE int split_cold(int v)
{
	if (__builtin_expect(v < 0, 0)) {
		sink = rare(v) + rare(v + 1);
		abort();
	}
	return leaf(v) + other(v);
}

int main(int argc, char **argv)
{
	(void)argv;
	fp = other;
	int r = tail_direct(argc) + tail_plt("x") + tail_ptr(argc) + table(argc) + split_cold(argc);
	return r & 1;
}
