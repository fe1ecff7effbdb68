/*
 * calib: the program profile traces to measure what one traced call costs
 * on this host (attach/calibrate.go). No C library: the engine sees only
 * these functions.
 *
 *   calib M [W]   calib_warm calls calib_warm_inner W times (0 if not
 *                 given), then calib_outer_K calls calib_inner_K M times,
 *                 for K = 0..15.
 *
 * The calib_inner_K do nothing: their self time per call is the probe's
 * cost inside the callee's time; calib_outer_K's self time per call of
 * calib_inner_K is the cost in the caller's time. Sixteen pairs give
 * sixteen batches, so that the median batch ignores a batch the scheduler
 * preempted. Every function has the prologue of ordinary compiled code,
 * so inline probes patch them as any function. The warm-up runs first:
 * an inline probe's first pass through its thread's ring touches every
 * page of it, which costs more than the calls themselves.
 * Build (in attach/internal/calib/): as --64 -o calib.o calibcode/calib.S &&
 *   ld -static -nostdlib --build-id=none -o calib.bin calib.o
 */
	.text
	.globl	_start
	.type	_start, @function
_start:
	xor	%ebp, %ebp
	/* A thread pointer as the C library sets one: the probes find a
	 * thread's state by %fs:0, the word the thread pointer points to,
	 * which holds the thread pointer itself. */
	lea	tcb(%rip), %rsi
	mov	%rsi, (%rsi)
	mov	$158, %eax		/* arch_prctl(ARCH_SET_FS, tcb) */
	mov	$0x1002, %edi
	syscall
	/* A signal stop (SIGWINCH, ignored) lets the tracer register the
	 * thread pointer it did not see at the entry. */
	mov	$39, %eax		/* getpid */
	syscall
	mov	%eax, %edi
	mov	%eax, %esi
	mov	$28, %edx		/* SIGWINCH */
	mov	$234, %eax		/* tgkill(pid, pid, SIGWINCH) */
	syscall
	mov	%rsp, %r12		/* argc, argv */
	mov	$1, %edi
	call	.Lnumber			/* M */
	mov	%rax, %rbx
	mov	$2, %edi
	call	.Lnumber			/* W */
	and	$-16, %rsp
	mov	%rax, %rdi
	call	calib_warm
	.irp	k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	mov	%rbx, %rdi
	call	calib_outer_\k
	.endr
	mov	$60, %eax		/* exit(0) */
	xor	%edi, %edi
	syscall
	.size	_start, .-_start

/* .Lnumber: argv[%rdi] (argc and argv at %r12) as a decimal number, 0 if
 * absent. A local label, not a symbol: nothing to trace. */
.Lnumber:
	xor	%eax, %eax
	cmp	(%r12), %rdi		/* argc */
	jae	2f
	mov	8(%r12,%rdi,8), %rsi
1:	movzbl	(%rsi), %ecx
	sub	$'0', %ecx
	cmp	$9, %ecx
	ja	2f
	imul	$10, %rax, %rax
	add	%rcx, %rax
	inc	%rsi
	jmp	1b
2:	ret

/* CALLER name, callee: name(n) calls callee n times. */
	.macro	CALLER name, callee
	.p2align 4
	.globl	\name
	.type	\name, @function
\name:
	push	%rbp
	mov	%rsp, %rbp
	push	%rbx
	sub	$8, %rsp
	mov	%rdi, %rbx
	test	%rbx, %rbx
	jz	2f
1:	call	\callee
	dec	%rbx
	jnz	1b
2:	add	$8, %rsp
	pop	%rbx
	pop	%rbp
	ret
	.size	\name, .-\name
	.endm

/* EMPTY name: a function that does nothing, with an ordinary prologue. */
	.macro	EMPTY name
	.p2align 4
	.globl	\name
	.type	\name, @function
\name:
	push	%rbp
	mov	%rsp, %rbp
	nop
	pop	%rbp
	ret
	.size	\name, .-\name
	.endm

	CALLER	calib_warm, calib_warm_inner
	EMPTY	calib_warm_inner
	.irp	k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	CALLER	calib_outer_\k, calib_inner_\k
	EMPTY	calib_inner_\k
	.endr

	.bss
	.p2align 12
tcb:	.zero	4096
	.section .note.GNU-stack,"",@progbits
