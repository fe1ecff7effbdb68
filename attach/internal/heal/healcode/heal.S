/*
 * The target's own SIGTRAP handler (issue #8: never hurt the target).
 *
 * When the tracer dies (SIGKILL, OOM killer), the kernel detaches its
 * tracees at once: a thread stopped on one of our int3s gets its SIGTRAP
 * delivered, and every int3 still in the text traps later. This handler,
 * installed by the tracer with an injected rt_sigaction, heals the process:
 * it puts every original byte back (from the table the tracer keeps
 * current) and resumes the thread where it would have gone. While the
 * tracer lives it never runs: ptrace sees every SIGTRAP first and
 * suppresses ours.
 *
 * Position independent; assembled to attach/internal/heal/heal.bin
 * (its blob test checks the blob against this file). The data
 * offsets below are mirrored in attach/internal/heal/layout.go.
 */
	.intel_syntax noprefix
	.text

	.set SI_KERNEL, 0x80
	.set TRAP_TRACE, 2              /* si_code of a single-step trap */
	.set EFLAGS_TF, 0x100
	.set MAGIC, 0x464f5250          /* "PROF": si_errno of a thread moved on */
	.set UC_GREGS, 40               /* ucontext_t.uc_mcontext.gregs */
	.set UC_RIP, UC_GREGS + 16*8
	.set UC_EFL, UC_GREGS + 17*8
	.set NGREGS_SAVED, 18           /* r8 ... rip, eflags */
	.set SYS_mprotect, 10
	.set SYS_rt_sigaction, 13
	.set SYS_rt_sigreturn, 15
	.set SYS_getpid, 39
	.set SYS_gettid, 186
	.set SYS_tgkill, 234
	.set SIGTRAP, 5
	.set SIGURG, 23
	.set SI_QUEUE, -1               /* si_code of rt_tgsigqueueinfo's signal */
	.set PARK_MAGIC, 0x4b524150     /* "PARK": si_errno of the tracer's ask */
	.set PARK_SLOTS, 32
	.set PARK_SLOT_SIZE, 32         /* {state, ucontext, rip, pad} */
	.set PARK_ASKED, 1
	.set PARK_PARKED, 2
	.set PARK_LEFT, 4
	.set SYS_rt_sigprocmask, 14
	.set SYS_nanosleep, 35
	.set SYS_clock_gettime, 228
	.set CLOCK_MONOTONIC, 1

/* 0x000: the handler: rdi = signal, rsi = siginfo, rdx = ucontext. */
handler:
	/* One more thread inside: its stack holds addresses in this area
	 * (the restorer, heal's return) until the restorer's sigreturn. A
	 * later profiler takes such an address on a stack for a stale one
	 * while none is inside. */
	lock inc qword ptr [rip + in_use]
	mov	r8, [rdx + UC_RIP]
	/* A thread the tracer single-stepped keeps the trap flag (the kernel
	 * clears it when the tracer resumes or detaches the thread, not when
	 * the tracer dies): its next instruction traps. A program without a
	 * SIGTRAP handler of its own cannot have set the flag itself and
	 * lived, so then the flag is ours: clear it and go on. */
	cmp	dword ptr [rsi + 8], TRAP_TRACE
	jne	0f
	cmp	qword ptr [rip + old_handler], 1
	ja	chain
	and	qword ptr [rdx + UC_EFL], ~EFLAGS_TF
	ret
0:	cmp	dword ptr [rsi + 8], SI_KERNEL
	jne	chain
	/* A thread the tracer rewound to the breakpoint before reaping its
	 * stop: the tracer marked its siginfo with that rip. */
	cmp	dword ptr [rsi + 4], MAGIC
	jne	1f
	cmp	r8, [rsi + 16]
	jne	1f
	call	heal
	ret
1:	lea	r9, [r8 - 1]
	/* The trap after a system call the tracer injected: the thread's
	 * own registers are in the save block. */
	cmp	qword ptr [rip + inject_valid], 0
	je	2f
	cmp	r9, [rip + inject_trap]
	jne	2f
	push	rdx
	call	heal
	pop	rdi
	add	rdi, UC_GREGS
	lea	rsi, [rip + inject_regs]
	mov	ecx, NGREGS_SAVED
	cld
	rep movsq
	mov	qword ptr [rip + inject_valid], 0
	ret
	/* One of our breakpoints: heal, then run the original instruction. */
2:	lea	r10, [rip + table]
	mov	rcx, [rip + count]
3:	test	rcx, rcx
	jz	20f
	cmp	[r10], r9
	jne	4f
	cmp	byte ptr [r10 + 10], 0
	jne	5f
4:	add	r10, 16
	dec	rcx
	jmp	3b
	/* Moved on by the tracer into an out-of-line area (a slot, the
	 * injection site): it resumes there as the tracer meant. */
20:	lea	r10, [rip + areas]
	mov	rcx, [rip + area_count]
21:	test	rcx, rcx
	jz	chain
	cmp	r8, [r10]
	jb	22f
	cmp	r8, [r10 + 8]
	jae	22f
	call	heal
	ret
22:	add	r10, 16
	dec	rcx
	jmp	21b
5:	push	rdx
	push	r9
	call	heal
	pop	r9
	pop	rdx
	mov	[rdx + UC_RIP], r9
	ret

/* Not ours: the program's own disposition, as if we were not there. */
chain:
	mov	rax, [rip + old_handler]
	cmp	rax, 1
	ja	7f
	jb	6f
	/* SIG_IGN: a trap the kernel forces (int3) kills even so. */
	cmp	dword ptr [rsi + 8], SI_KERNEL
	je	6f
	ret
	/* SIG_DFL: make it the disposition again and raise the signal; it is
	 * delivered, with its default action, when this handler returns. */
6:	call	set_default
	mov	eax, SYS_getpid
	syscall
	mov	r12, rax
	mov	eax, SYS_gettid
	syscall
	mov	rsi, rax
	mov	rdi, r12
	mov	edx, SIGTRAP
	mov	eax, SYS_tgkill
	syscall
	ret
	/* The program's handler: tail-call it with the same arguments. */
7:	test	byte ptr [rip + old_flags + 3], 0x80   /* SA_RESETHAND */
	jz	8f
	push	rdi
	push	rsi
	push	rdx
	call	set_default
	pop	rdx
	pop	rsi
	pop	rdi
8:	jmp	qword ptr [rip + old_handler]

set_default:
	mov	edi, SIGTRAP
	lea	rsi, [rip + dfl_act]
	xor	edx, edx
	mov	r10d, 8
	mov	eax, SYS_rt_sigaction
	syscall
	ret

/* heal puts every original byte back, whichever thread comes first. Once
 * it has, a later call puts back only the bytes that are an int3 again:
 * one written after the first heal (which ran while the tracer still
 * wrote, a SIGTRAP of ours delivered to the program) would otherwise
 * stay, and a thread reaching it would trap there for ever (the entry is
 * live: heal, rewind, trap again); any other byte is left as it is now. */
heal:
	push	rbx
	push	r12
	push	r13
	push	r14
	push	r15
	lea	rbx, [rip + lock]
10:	mov	eax, 1
	xchg	[rbx], eax
	test	eax, eax
	jz	11f
	pause
	jmp	10b
11:	mov	r15d, dword ptr [rip + healed]
	lea	r12, [rip + table]
	mov	r13, [rip + count]
12:	test	r13, r13
	jz	13f
	cmp	byte ptr [r12 + 10], 0
	je	15f
	mov	r14, [r12]
	and	r14, -4096
	mov	rdi, r14
	mov	esi, 4096
	mov	edx, 7                  /* PROT_READ|PROT_WRITE|PROT_EXEC */
	mov	eax, SYS_mprotect
	syscall
	test	rax, rax
	jnz	15f                     /* unmapped meanwhile: leave it */
	mov	rax, [r12]
	mov	cl, [r12 + 8]
	test	r15d, r15d
	jz	16f
	cmp	byte ptr [rax], 0xcc
	jne	17f
16:	mov	[rax], cl
17:	mov	rdi, r14
	mov	esi, 4096
	movzx	edx, byte ptr [r12 + 9]
	mov	eax, SYS_mprotect
	syscall
15:	add	r12, 16
	dec	r13
	jmp	12b
13:	mov	dword ptr [rip + healed], 1
	mov	dword ptr [rbx], 0
	pop	r15
	pop	r14
	pop	r13
	pop	r12
	pop	rbx
	ret

/* 0x500: the park handler, our SIGURG handler while a thread profile does
 * not trace (another tracer holds it) shares the process. ptrace cannot
 * stop such a thread, yet no thread may run while the tracer changes code
 * it runs: the tracer asks it to park here (rt_tgsigqueueinfo, SIGURG,
 * SI_QUEUE, si_errno PARK_MAGIC, si_value {slot, cookie}); it publishes
 * where it was interrupted and waits, every signal blocked, until the
 * tracer lets it go or goes quiet past the deadline it keeps moving (it
 * was killed). Any other SIGURG goes to the program's disposition (both
 * SIG_DFL and SIG_IGN ignore it). */
	.org	0x500
park_handler:
	lock inc qword ptr [rip + in_use]
	cmp	dword ptr [rsi + 8], SI_QUEUE
	jne	park_chain
	cmp	dword ptr [rsi + 4], PARK_MAGIC
	jne	park_chain
	mov	eax, [rsi + 28]
	cmp	rax, [rip + park_cookie]
	jne	park_chain
	mov	eax, [rsi + 24]
	cmp	eax, PARK_SLOTS
	jae	park_chain
	shl	eax, 5
	lea	r9, [rip + park_slots]
	add	r9, rax
	mov	rax, [rdx + UC_RIP]
	mov	[r9 + 16], rax
	mov	[r9 + 8], rdx
	mov	eax, PARK_ASKED
	mov	ecx, PARK_PARKED
	lock cmpxchg [r9], rcx
	jne	39f                     /* not asked now (a late signal): go on */
	sub	rsp, 24                 /* timespec, then the mask */
	mov	qword ptr [rsp + 16], -1
	xor	edi, edi                /* SIG_BLOCK; sigreturn restores the mask */
	lea	rsi, [rsp + 16]
	xor	edx, edx
	mov	r10d, 8
	mov	eax, SYS_rt_sigprocmask
	syscall
	/* The deadline must have passed at two looks in a row: a look during
	 * the tracer's write of a later one may read a torn value. */
	xor	r8d, r8d
31:	cmp	qword ptr [r9], PARK_PARKED
	jne	38f
	mov	edi, CLOCK_MONOTONIC
	mov	rsi, rsp
	mov	eax, SYS_clock_gettime
	syscall
	imul	rax, [rsp], 1000000000
	add	rax, [rsp + 8]
	cmp	rax, [rip + park_deadline]
	jb	32f
	inc	r8d
	cmp	r8d, 2
	jae	37f
	jmp	33f
32:	xor	r8d, r8d
33:	mov	qword ptr [rsp], 0
	mov	qword ptr [rsp + 8], 20000
	mov	rdi, rsp
	xor	esi, esi
	mov	eax, SYS_nanosleep
	syscall
	jmp	31b
	/* Past the deadline: the tracer is gone. */
37:	mov	eax, PARK_PARKED
	mov	ecx, PARK_LEFT
	lock cmpxchg [r9], rcx
38:	add	rsp, 24
39:	ret

park_chain:
	mov	rax, [rip + park_old_handler]
	cmp	rax, 1
	jbe	39b
	test	byte ptr [rip + park_old_flags + 3], 0x80   /* SA_RESETHAND */
	jz	40f
	push	rdi
	push	rsi
	push	rdx
	mov	edi, SIGURG
	lea	rsi, [rip + dfl_act]
	xor	edx, edx
	mov	r10d, 8
	mov	eax, SYS_rt_sigaction
	syscall
	pop	rdx
	pop	rsi
	pop	rdi
40:	jmp	qword ptr [rip + park_old_handler]

/* restore: where a thread resumes, past the injection site's int3, when
 * the tracer reaped that trap (which clears its SIGTRAP) and died before
 * giving the thread its registers back: load them from the save block and
 * go on where the thread was. The red zone below its stack pointer is
 * left alone. */
	.org	0x700
restore:
	mov	rsp, [rip + inject_regs + 15*8]
	lea	rsp, [rsp - 256]
	push	qword ptr [rip + inject_regs + 17*8]
	popfq
	lea	rsp, [rsp + 256]
	mov	r8, [rip + inject_regs + 0*8]
	mov	r9, [rip + inject_regs + 1*8]
	mov	r10, [rip + inject_regs + 2*8]
	mov	r11, [rip + inject_regs + 3*8]
	mov	r12, [rip + inject_regs + 4*8]
	mov	r13, [rip + inject_regs + 5*8]
	mov	r14, [rip + inject_regs + 6*8]
	mov	r15, [rip + inject_regs + 7*8]
	mov	rdi, [rip + inject_regs + 8*8]
	mov	rsi, [rip + inject_regs + 9*8]
	mov	rbp, [rip + inject_regs + 10*8]
	mov	rbx, [rip + inject_regs + 11*8]
	mov	rdx, [rip + inject_regs + 12*8]
	mov	rax, [rip + inject_regs + 13*8]
	mov	rcx, [rip + inject_regs + 14*8]
	mov	qword ptr [rip + inject_valid], 0
	jmp	qword ptr [rip + inject_regs + 16*8]

/* sa_restorer of the handler: the thread leaves, by the handler's return
 * or the program's handler's it tail-called. */
	.org	0x7f0
restorer:
	lock dec qword ptr [rip + in_use]
	mov	eax, SYS_rt_sigreturn
	syscall

/* Data, written by the tracer. */
	.org	0x800
lock:		.long 0
healed:		.long 0
count:		.quad 0                 /* table entries in use */
old_act:                                /* the program's own disposition */
old_handler:	.quad 0
old_flags:	.quad 0
old_restorer:	.quad 0
old_mask:	.quad 0
new_act:	.quad 0, 0, 0, 0        /* ours, the argument of the install */
dfl_act:	.quad 0, 0, 0, 0        /* SIG_DFL */
inject_trap:	.quad 0                 /* address of the injection site's int3 */
inject_valid:	.quad 0                 /* 1 while inject_regs holds a thread's registers */
inject_regs:	.fill 18, 8, 0          /* r8 ... rip, eflags in ucontext order */
area_count:	.quad 0                 /* out-of-line areas listed below */
areas:		.fill 28, 8, 0          /* {lo, hi} of each */
in_use:		.quad 0                 /* threads between the handler's entry and the restorer */
	.org	0xa00
park_old_act:                           /* the program's own SIGURG disposition */
park_old_handler: .quad 0
park_old_flags:	.quad 0
park_old_restorer: .quad 0
park_old_mask:	.quad 0
park_new_act:	.quad 0, 0, 0, 0        /* the park handler's */
park_cookie:	.quad 0                 /* si_value's high half of the tracer's asks */
park_deadline:	.quad 0                 /* CLOCK_MONOTONIC ns: parked threads leave after */
	.org	0xa80
park_slots:	.fill 32*4, 8, 0        /* PARK_SLOTS x {state, ucontext, rip, pad} */

/* 0x1000: breakpoint table: {addr u64, orig u8, prot u8, live u8, pad}. */
	.org	0x1000
table:
