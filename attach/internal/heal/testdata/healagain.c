/* The heal handler, installed in this program as the engine installs it
 * in a target, with one table entry: an int3 written at target() is put
 * back and the call goes on, and so is one written again after that first
 * heal (the tracer, alive when the first heal ran, wrote it later), where
 * a handler that heals once would rewind the thread onto the int3 for
 * ever (the alarm ends it then).
 * Usage: healagain CODE COUNT TABLE RESTORER (the handler's code, and the
 * offsets of its count word, table and restorer in its area). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) int target(int x) { return x * 3 + 1; }

static void poke(unsigned char *at, unsigned char b) {
	uintptr_t pg = (uintptr_t)at & ~(uintptr_t)4095;
	mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE | PROT_EXEC);
	*(volatile unsigned char *)at = b;
	mprotect((void *)pg, 4096, PROT_READ | PROT_EXEC);
}

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: healagain CODE COUNT TABLE RESTORER\n");
		return 2;
	}
	unsigned char code[4096];
	FILE *f = fopen(argv[1], "rb");
	if (!f || fread(code, 1, sizeof code, f) != sizeof code) {
		perror(argv[1]);
		return 2;
	}
	fclose(f);
	unsigned long count = strtoul(argv[2], 0, 0), table = strtoul(argv[3], 0, 0), restorer = strtoul(argv[4], 0, 0);
	unsigned char *base = mmap(0, 8 << 20, PROT_READ | PROT_WRITE | PROT_EXEC,
	                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	memcpy(base, code, sizeof code);
	int (*volatile fn)(int) = target;
	unsigned char *at = (unsigned char *)fn;
	unsigned char *ent = base + table;
	*(uint64_t *)ent = (uint64_t)at;
	ent[8] = at[0];
	ent[9] = PROT_READ | PROT_EXEC;
	ent[10] = 1; /* live */
	*(uint64_t *)(base + count) = 1;
	struct { uint64_t handler, flags, restorer, mask; } act = {
		(uint64_t)base, 0x4 /* SA_SIGINFO */ | 0x04000000 /* SA_RESTORER */, (uint64_t)(base + restorer), 0};
	if (syscall(SYS_rt_sigaction, SIGTRAP, &act, NULL, 8) != 0) {
		perror("rt_sigaction");
		return 2;
	}
	alarm(5);
	for (int round = 1; round <= 3; round++) {
		poke(at, 0xcc);
		int r = fn(round);
		if (r != round * 3 + 1 || at[0] == 0xcc) {
			printf("round %d: target returned %d, its first byte %#x\n", round, r, at[0]);
			return 1;
		}
	}
	printf("ok\n");
	return 0;
}
