/*
 * calib: the program profile traces to measure what one traced call costs
 * on this host (attach/calibrate.go). No C library: the engine sees only
 * these functions.
 *
 *   calib N     calib_outer calls calib_inner N times, then exits 0.
 *
 * calib_inner does nothing: its measured self time per call is the probe's
 * cost inside the callee's time; calib_outer's self time per call of
 * calib_inner is the cost in the caller's time. Both have the prologue of
 * ordinary compiled code, so inline probes patch them as any function.
 * Build: as --64 -o calib.o calib.S && ld -static -nostdlib --build-id=none -o calib.bin calib.o
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
	xor	%ecx, %ecx		/* N */
	cmpq	$2, (%rsp)		/* argc */
	jb	2f
	mov	16(%rsp), %rsi		/* argv[1] */
1:	movzbl	(%rsi), %eax
	sub	$'0', %eax
	cmp	$9, %eax
	ja	2f
	imul	$10, %rcx, %rcx
	add	%rax, %rcx
	inc	%rsi
	jmp	1b
2:	and	$-16, %rsp
	mov	%rcx, %rdi
	call	calib_outer
	mov	$60, %eax		/* exit(0) */
	xor	%edi, %edi
	syscall
	.size	_start, .-_start

	.p2align 4
	.globl	calib_outer
	.type	calib_outer, @function
calib_outer:
	push	%rbp
	mov	%rsp, %rbp
	push	%rbx
	sub	$8, %rsp
	mov	%rdi, %rbx
	test	%rbx, %rbx
	jz	2f
1:	call	calib_inner
	dec	%rbx
	jnz	1b
2:	add	$8, %rsp
	pop	%rbx
	pop	%rbp
	ret
	.size	calib_outer, .-calib_outer

	.p2align 4
	.globl	calib_inner
	.type	calib_inner, @function
calib_inner:
	push	%rbp
	mov	%rsp, %rbp
	nop
	pop	%rbp
	ret
	.size	calib_inner, .-calib_inner
	.bss
	.p2align 12
tcb:	.zero	4096
	.section .note.GNU-stack,"",@progbits
