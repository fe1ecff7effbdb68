// oolrun.c executes machine code for outofline_exec_test.go. For each record
// read from stdin it maps a code region (and optionally a slot region) at
// fixed addresses, loads the given registers, jumps to the entry point and
// catches the first signal (normally the SIGTRAP of an int3 landing pad),
// then writes the registers, xmm0 and the code region's final contents to
// stdout. All numbers are little-endian uint64.
//
// Record in:  code_base code_size slot_base slot_size entry
//             regs[16] (rax rcx rdx rbx rsp rbp rsi rdi r8..r15) rflags
//             xmm0[16 bytes] xmm1[16 bytes] code_image slot_image
// Record out: signo rip regs[16] rflags xmm0[16 bytes] code_image
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

// launch_state is read by launch: regs[16], rflags, xmm0, xmm1.
uint64_t launch_state[16 + 1 + 4];
uint64_t launch_rip;

// launch loads every register from launch_state and jumps to launch_rip.
// rsp and rdi are loaded last: rdi points at the state until then.
void launch(uint64_t *state);
__asm__(
	".text\n"
	".globl launch\n"
	"launch:\n"
	"  pushq 128(%rdi)\n"
	"  popfq\n"
	"  movdqu 136(%rdi), %xmm0\n"
	"  movdqu 152(%rdi), %xmm1\n"
	"  movq 0(%rdi), %rax\n"
	"  movq 8(%rdi), %rcx\n"
	"  movq 16(%rdi), %rdx\n"
	"  movq 24(%rdi), %rbx\n"
	"  movq 40(%rdi), %rbp\n"
	"  movq 48(%rdi), %rsi\n"
	"  movq 64(%rdi), %r8\n"
	"  movq 72(%rdi), %r9\n"
	"  movq 80(%rdi), %r10\n"
	"  movq 88(%rdi), %r11\n"
	"  movq 96(%rdi), %r12\n"
	"  movq 104(%rdi), %r13\n"
	"  movq 112(%rdi), %r14\n"
	"  movq 120(%rdi), %r15\n"
	"  movq 32(%rdi), %rsp\n"
	"  movq 56(%rdi), %rdi\n"
	"  jmp *launch_rip(%rip)\n");

static sigjmp_buf env;
static uint64_t out[2 + 16 + 1];
static unsigned char out_xmm0[16];

static void handler(int sig, siginfo_t *si, void *ctx) {
	(void)si;
	static const int order[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
				      REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
	ucontext_t *uc = ctx;
	out[0] = (uint64_t)sig;
	out[1] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	for (int i = 0; i < 16; i++)
		out[2 + i] = (uint64_t)uc->uc_mcontext.gregs[order[i]];
	out[18] = (uint64_t)uc->uc_mcontext.gregs[REG_EFL];
	memcpy(out_xmm0, &uc->uc_mcontext.fpregs->_xmm[0], 16);
	siglongjmp(env, 1);
}

static void must_read(void *p, size_t n) {
	if (fread(p, 1, n, stdin) != n) {
		fprintf(stderr, "oolrun: short read\n");
		exit(2);
	}
}

static void *map_at(uint64_t base, uint64_t size) {
	void *p = mmap((void *)base, size, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)base) {
		perror("oolrun: mmap");
		exit(2);
	}
	return p;
}

int main(void) {
	static char altstack[1 << 16];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	if (sigaltstack(&ss, NULL) != 0) {
		perror("oolrun: sigaltstack");
		return 2;
	}
	struct sigaction sa = {.sa_sigaction = handler, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER};
	int sigs[] = {SIGTRAP, SIGSEGV, SIGILL, SIGBUS, SIGFPE};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);

	uint64_t hdr[5];
	while (fread(hdr, sizeof hdr, 1, stdin) == 1) {
		uint64_t code_base = hdr[0], code_size = hdr[1], slot_base = hdr[2], slot_size = hdr[3];
		must_read(launch_state, sizeof launch_state);
		unsigned char *code = map_at(code_base, code_size);
		must_read(code, code_size);
		unsigned char *slot = NULL;
		if (slot_size > 0) {
			slot = map_at(slot_base, slot_size);
			must_read(slot, slot_size);
		}
		launch_rip = hdr[4];
		memset(out, 0, sizeof out);
		if (sigsetjmp(env, 1) == 0)
			launch(launch_state);
		fwrite(out, sizeof out, 1, stdout);
		fwrite(out_xmm0, sizeof out_xmm0, 1, stdout);
		fwrite(code, 1, code_size, stdout);
		munmap(code, code_size);
		if (slot)
			munmap(slot, slot_size);
	}
	return 0;
}
