/*
 * The inline probe's stubs (docs/design.md, Inline probes): a traced call
 * without a stop.
 *
 * A probed function's first bytes jump to its trampoline, which pushes the
 * function's id and calls `entry`. The entry stub appends an entry event
 * to the thread's ring (shared with the tracer through a memfd), keeps the
 * return address on the thread's shadow stack and has the function called
 * from `via`, whose return address is `retstub`'s: the function returns
 * there, and the return stub appends an exit event and returns to the
 * original address, both returns as the CPU predicts them. No system
 * call, no stop. A function with exit probes (F_EXIT) is not hijacked:
 * each of its returns goes through a trampoline that calls `exitsite`
 * and returns itself, and each tail jump through one that calls
 * `tailsite`, which hands the frame to the return stub.
 *
 * A function recorded in detail (--detail) has F_DETAIL in its id, and an
 * exit event carries rax for every function. Its arguments go one of two
 * ways. With D_DEFER 0, its entry event takes three slots, the next two
 * holding its argument registers (two slots, with F_ARGS3, when its
 * parameters fill three at most). With D_DEFER set (a rule a call must
 * meet to be kept: --slow, --detail-if), the entry keeps them with the
 * entry's time in a side record beside its shadow entry (T_SIDE, marked
 * by DETAIL_MARK on the return address), and an ARGS event (the frame's
 * slot S, then the argument slots) goes to the ring only for a frame that
 * meets the rule when it ends: lasted D_SLOW_TICKS, and the condition on
 * an argument (checked at the entry: a call failing it is not marked) or
 * on rax (at the return; a frame that did not return fails it) holds. It
 * ends at its return, or at the entry or return that finds it abandoned
 * (the tracer closes such frames there), or when an unwinder takes the
 * thread's frames back. A call that is not kept then costs the ring what
 * an untraced-in-detail one does.
 *
 * A calling context (--context 'A>B') is a per-thread count (T_CTX) of
 * its components open in order: the entry of component k (F_CTX with
 * F_CTXOPEN, k in bits 24-26) when the count is k makes it k + 1 and marks
 * its shadow entry (bit 63 of the return address, k in bits 56-62); the
 * return, or the drop of an abandoned frame, sets the count back to the
 * mark. A function recorded only in the context (F_CTX, the number of
 * components n in bits 24-26) returns from its entry stub, with no
 * event and no hijack, while the count is below n.
 *
 * A thread finds its state from its thread pointer (%fs:0) through a hash
 * table the tracer fills at each thread's first stop. Every register is
 * preserved (GCC's IPA-RA lets callers of local functions keep values in
 * call-clobbered registers the callee does not touch); only flags are not,
 * as calls clobber them. Rings are per thread: a slot is reserved with one
 * xadd (a signal handler running traced calls in the middle of a stub
 * reserves the next ones) and committed by writing its first word last.
 *
 * Position independent; each code area gets a copy, with the address of
 * the data block written at DATA_PTR. Assembled to probe.bin beside
 * inlinecode/ (its test checks the blob against this file); offsets are
 * mirrored in attach/internal/stub/layout.go.
 */
	.intel_syntax noprefix
	.text

	/* data block */
	.set D_RETSTUB, 0x00         /* address of the return stub in use */
	.set D_DROPPING, 0x08        /* nonzero: the consumer is gone, record nothing */
	.set D_STALL_LIMIT, 0x10     /* ticks without a heartbeat: the tracer is gone */
	.set D_UNREGISTERED, 0x18    /* calls by threads without a state */
	.set D_SHADOW_FULL, 0x20     /* returns left alone: shadow stack full */
	.set D_LOST, 0x28            /* returns with no shadow entry (never expected) */
	.set D_SLOW_TICKS, 0x30      /* detail arguments: a frame must last this long */
	.set D_DEFER, 0x38           /* nonzero: detail arguments wait in side records */
	.set D_COND_AT, 0x40         /* the condition's register: 0 none, 8 rax, else */
	                             /* its offset where the entry stub saved it */
	.set D_COND_TYPE, 0x48       /* one of COND_I32 ... (HOLDS) */
	.set COND_I32, 0
	.set COND_U32, 1
	.set COND_I64, 2
	.set COND_U64, 3
	.set D_COND_MASK, 0x50       /* holds if below (bit 0), equal (1), above (2) */
	.set D_COND_VALUE, 0x58      /* compared with, in its type (HOLDS) */
	.set D_LIFELINE, 0x60        /* address of the tracer's lifeline word, in the */
	                             /* rings: its thread id, or the kernel's mark */
	                             /* (FUTEX_OWNER_DIED, bit 30) once it exited */
	.set COND_RET, 8
	.set D_TABLE, 0x1000         /* 4096 x {thread pointer, state} */
	.set TABLE_MASK, 4095

	/* thread state */
	.set T_RING, 0x00
	.set T_DEPTH, 0x08
	.set T_STACK_LO, 0x10        /* the thread's own stack: entries below the */
	.set T_STACK_HI, 0x18        /* current frame there are abandoned frames */
	.set T_CAP, 0x20
	.set T_CTX, 0x28             /* context components open (--context) */
	.set T_SIDE, 0x30            /* side records, one per shadow entry: {entry tick,
	                              * argument slots (1 or 2), rdi, rsi, rdx, rcx, r8, r9} */
	.set T_STALE, 0x38           /* shadow entries below this index were open when a
	                              * waiting call returned: their returns are stale */
	.set T_SHADOW, 0x40          /* {slot, original return address} */

	/* ring (shared) */
	.set R_HEAD, 0x00
	.set R_TAIL, 0x40
	.set R_DROPPED, 0x80
	.set R_STALL_TICKS, 0x88
	.set R_STALLS, 0x90
	.set R_SKIPPED, 0x98         /* calls outside the context, not recorded */
	.set R_BEAT, 0xc0            /* the tracer's heartbeat, as it drains */
	.set R_EVENTS, 0x1000
	.set RING_MASK, 32767
	.set RING_ROOM, 32768 - 64   /* slack for signal handlers nesting */
	.set R_COUNTS, 0x101000      /* the count table, after the events: */
	.set COUNT_BITS, 13          /* 8192 x {return address, id, calls, 0} */
	.set COUNT_MASK, 8191
	.set COUNT_PROBES, 64        /* entries looked at before giving up */

	.set F_RESTORE, 0x80000000   /* id flag: an unwinder's entry */
	.set F_DETAIL, 0x40000000    /* id flag: record the arguments */
	.set F_ARGS3, 0x20000000     /* ... in one slot: rdi, rsi, rdx */
	.set F_CTX, 0x10000000       /* id flag: a context role, in bits 24-26 */
	.set F_CTXOPEN, 0x08000000   /* ... a component that opens it */
	.set F_WAIT, 0x00800000      /* id flag: a waiting call (a system call's wrapper) */
	.set F_EXIT, 0x00400000      /* id flag: exit probes at its returns: no hijack */
	.set CTX_SHIFT, 24           /* ... its index k, CTX_MAX at most */
	.set CTX_MAX, 7
	.set CTX_MARK, 0x8000000000000000 /* a shadow entry that opened component k */
	.set DETAIL_MARK, 55         /* bit of a shadow entry whose side record holds arguments */
	.set TAIL_MARK, 63           /* bit of a count table's return address: a tail */
	                             /* jump's call, counted for the jumper's call site */
	.set INFLIGHT_MARK, 54       /* bit of a shadow entry the tracer made for a frame */
	                             /* running at attach: its return is by a jump */
	.set STALL_WORD, 0xfffffffe00000000 /* id of a stall event, in word 0 */
	.set ARGS_WORD, 0xfffffffd00000000  /* id of an arguments slot */
	.set ARGS_FOR, 0xfffffffc    /* id of an ARGS event with one argument slot */
	                             /* (ARGS_FOR - 1: with two) */
	.set COUNTED_ID, 0xfffffffa  /* a counted call: id in sp's word, return address */

/* Every register a stub touches, kept (flags excepted). */
/* The six registers the counting stub uses; SAVE adds the other three
 * caller-saved ones. */
.macro SAVE6
	push	rax
	push	rcx
	push	rdx
	push	rsi
	push	rdi
	push	r8
.endm

.macro RESTORE6
	pop	r8
	pop	rdi
	pop	rsi
	pop	rdx
	pop	rcx
	pop	rax
.endm

.macro SAVE
	SAVE6
	push	r9
	push	r10
	push	r11
.endm

.macro RESTORE
	pop	r11
	pop	r10
	pop	r9
	RESTORE6
.endm

/* rsi = the thread's state, or 0. Clobbers rax, rcx, rdx, r10. */
.macro LOOKUP
	mov	rax, fs:0
	mov	rcx, rax
	shr	rcx, 12
	imul	rcx, rcx, 0x5bd1e995
	shr	rcx, 52
	xor	esi, esi
	mov	r10d, TABLE_MASK + 1
1:	mov	rdx, rcx
	shl	rdx, 4
	add	rdx, r8
	cmp	[rdx + D_TABLE], rax
	je	2f
	cmp	qword ptr [rdx + D_TABLE], 0
	je	3f
	inc	ecx
	and	ecx, TABLE_MASK
	dec	r10d
	jnz	1b
	jmp	3f
2:	mov	rsi, [rdx + D_TABLE + 8]
3:
.endm

/* A shadow entry's return address \r, marked (CTX_MARK | k << 56) by a
 * context component's entry: unmark it; the count T_CTX of the thread at
 * rsi goes down to k if above. Clobbers rax. */
.macro UNMARK r
	btr	\r, 63
	jnc	1f
	mov	rax, \r
	shr	rax, 56
	shl	\r, 8
	shr	\r, 8
	cmp	rax, [rsi + T_CTX]
	jae	1f
	mov	[rsi + T_CTX], rax
1:
.endm

/* Reserve the next n slots of the ring at rdi (var: 1 + [rsp] slots):
 * r9 = the first, rcx = its index (its commit word is index + 1).
 * Clobbers rax. */
.macro RESERVE n=1, var=0
	.if \var
	mov	rax, [rsp]
	inc	eax
	.else
	mov	eax, \n
	.endif
	xadd	[rdi + R_HEAD], rax
	mov	rcx, rax
	and	eax, RING_MASK
	shl	rax, 5
	lea	r9, [rdi + rax + R_EVENTS]
.endm

/* Write the argument slot at index rcx + \k (three of the registers saved
 * at rsp + \a, \b, \c) and commit it. Clobbers rax, rdx, r10. */
.macro ARGSLOT k, a, b, c
	lea	eax, [rcx + \k]
	and	eax, RING_MASK
	shl	rax, 5
	lea	rax, [rdi + rax + R_EVENTS]
	mov	r10, [rsp + \a]
	mov	[rax + 8], r10
	mov	r10, [rsp + \b]
	mov	[rax + 16], r10
	mov	r10, [rsp + \c]
	mov	[rax + 24], r10
	lea	edx, [rcx + \k + 1]
	mov	r10, ARGS_WORD
	or	rdx, r10
	mov	[rax], rdx
.endm

/* Append an event: r8 = data, rsi = state, rax = word0 high half (id or
 * ~0), rdx = sp, r10 = return address (entry) or rax (exit). With n = 2
 * or 3 (an entry stub's detail entry) n - 1 argument slots follow,
 * committed before the event so that the tracer finds them with it; with
 * var, [rsp] of them (1 or 2) from [rsp + 8] on (an ARGS event). save:
 * the event's tick goes to [rsp - 48] too (red zone) for the side record.
 * Clobbers rax, rcx, rdx, rdi, r9, r10, r11. */
.macro EVENT n=1, var=0, save=0
	cmp	qword ptr [r8 + D_DROPPING], 0
	jne	12f
	mov	rdi, [rsi + T_RING]
	mov	r11, rax
	shl	r11, 32
10:	mov	rax, [rdi + R_HEAD]
	sub	rax, [rdi + R_TAIL]
	cmp	rax, RING_ROOM
	jae	13f
	RESERVE \n, \var
	/* Ask for the line 32 events ahead, for writing: the tracer read it
	 * on the ring's last round, and taking it back is a cross-core miss
	 * that would stall this thread's stores (here about 50 ns a call in a
	 * busy loop, twice the probes' own cost). */
	prefetchw [r9 + 1024]
	mov	[r9 + 16], rdx
	mov	[r9 + 24], r10
	.if \n >= 2
	ARGSLOT 1, E_RDI, E_RSI, E_RDX
	.endif
	.if \n == 3
	ARGSLOT 2, E_RCX, E_R8, E_R9
	.endif
	.if \var
	ARGSLOT 1, 8, 16, 24
	cmp	qword ptr [rsp], 2
	jb	19f
	ARGSLOT 2, 32, 40, 48
19:
	.endif
	rdtsc
	shl	rdx, 32
	or	rax, rdx
	mov	[r9 + 8], rax
	.if \save
	mov	[rsp - 48], rax
	.endif
	inc	ecx                     /* the commit word: index + 1, 32 bits */
	or	r11, rcx
	mov	[r9], r11
	jmp	14f
13:	/* Full: wait for the tracer. It beats (R_BEAT) as it drains; a
	 * tracer that has not beaten for D_STALL_LIMIT ticks is gone, and the
	 * process records nothing from then on (D_DROPPING 1); so is one the
	 * kernel marked dead in its lifeline word, at once (D_DROPPING 2, the
	 * mark shifted: a thread id is below bit 29). Red zone: [rsp-8] sp,
	 * [rsp-16] return address, [rsp-24] start, [rsp-32] last beat seen
	 * at, [rsp-40] end; r9 the beat. */
	mov	[rsp - 8], rdx
	mov	[rsp - 16], r10
	rdtsc
	shl	rdx, 32
	or	rax, rdx
	mov	[rsp - 24], rax
	mov	[rsp - 32], rax
	mov	r9, [rdi + R_BEAT]
15:	pause
	cmp	qword ptr [r8 + D_DROPPING], 0
	jne	16f
	mov	rax, [r8 + D_LIFELINE]
	mov	eax, [rax]
	shr	eax, 29
	jnz	20f
	mov	rax, [rdi + R_HEAD]
	sub	rax, [rdi + R_TAIL]
	cmp	rax, RING_ROOM
	jb	17f
	rdtsc
	shl	rdx, 32
	or	rax, rdx
	cmp	r9, [rdi + R_BEAT]
	je	18f
	mov	r9, [rdi + R_BEAT]      /* it beats: alive, wait on */
	mov	[rsp - 32], rax
18:	sub	rax, [rsp - 32]
	cmp	rax, [r8 + D_STALL_LIMIT]
	jb	15b
	mov	eax, 1
20:	mov	[r8 + D_DROPPING], rax
16:	mov	rdx, [rsp - 8]
	mov	r10, [rsp - 16]
	jmp	12f
17:	rdtsc
	shl	rdx, 32
	or	rax, rdx
	mov	[rsp - 40], rax
	sub	rax, [rsp - 24]
	add	[rdi + R_STALL_TICKS], rax
	inc	qword ptr [rdi + R_STALLS]
	/* A stall event (start, end): the tracer takes the wait out of the
	 * thread's times, as it does the time it held a thread stopped;
	 * otherwise the call the thread is in would look slower. The room
	 * just made has a slot for it (RING_ROOM leaves slack). */
	RESERVE
	mov	rax, [rsp - 40]
	mov	[r9 + 16], rax
	mov	qword ptr [r9 + 24], 0
	mov	rax, [rsp - 24]
	mov	[r9 + 8], rax
	inc	ecx
	mov	rax, STALL_WORD
	or	rcx, rax
	mov	[r9], rcx
	mov	rdx, [rsp - 8]
	mov	r10, [rsp - 16]
	jmp	10b
12:	mov	rdi, [rsi + T_RING]
	inc	qword ptr [rdi + R_DROPPED]
14:
.endm

/* Unless shadow entry slot \a lies on this thread's own stack, as does
 * the current slot \b (then an entry at or below \b was abandoned), go to
 * \other: it may be a coroutine's or a sigaltstack's. */
.macro OWNSTACK a, b, other
	cmp	\a, [rsi + T_STACK_LO]
	jb	\other
	cmp	\b, [rsi + T_STACK_HI]
	jae	\other
.endm

/* Go to \no unless the detail condition holds for rax, read as the
 * tracer reads it (detail.Cond): i32 its low half sign-extended, u32
 * zero-extended, i64 as is, all compared signed; u64 with its top bit
 * flipped, as the tracer flipped D_COND_VALUE's, so that the signed
 * comparison orders them as unsigned ones. Clobbers rax, r9. */
.macro HOLDS no
	mov	r9, [r8 + D_COND_TYPE]
	cmp	r9d, COND_I64
	jb	3f
	je	5f                      /* i64 */
	btc	rax, 63                 /* u64 */
	jmp	5f
3:	test	r9d, r9d                /* COND_I32 is 0 */
	jnz	4f
	movsxd	rax, eax                /* i32 */
	jmp	5f
4:	mov	eax, eax                /* u32 */
5:	cmp	rax, [r8 + D_COND_VALUE]
	mov	r9d, 1
	je	6f
	mov	r9d, 0
	jl	6f
	mov	r9d, 2
6:	bt	[r8 + D_COND_MASK], r9
	jnc	\no
.endm

/* Unless this entry's arguments are deferred to a side record (a detail
 * function, D_DEFER set, side records given, the condition on an
 * argument, if any, holding), go to \skip. Clobbers rax, r9. */
.macro DEFERS skip
	test	dword ptr [rsp + E_ID], F_DETAIL
	jz	\skip
	cmp	qword ptr [r8 + D_DEFER], 0
	je	\skip
	cmp	qword ptr [rsi + T_SIDE], 0
	je	\skip
	mov	rax, [r8 + D_COND_AT]
	cmp	rax, COND_RET
	jbe	8f
	mov	rax, [rsp + rax]
	HOLDS	\skip
8:
.endm

/* r11 = the side record of shadow entry rcx of the thread at rsi. */
/* Ends the shadow entry whose slot S is at [rsp + s] (rax: [rsp + rax],
 * the return value): its event, with the frames abandoned above it on
 * this thread's stack dropped (a longjmp, an exception), and keep=1 puts
 * the original return address back into S. No entry: to miss. */
.macro POPENTRY s, rax, miss, keep
	lea	rdx, [rsp + \s]
	mov	rcx, [rsi + T_DEPTH]
30:	test	rcx, rcx
	jz	\miss
	dec	rcx
	mov	rdi, rcx
	shl	rdi, 4
	cmp	[rsi + rdi + T_SHADOW], rdx
	jne	30b
	mov	r10, [rsi + rdi + T_SHADOW + 8]
	btr	r10, DETAIL_MARK
	jnc	34f
	push	rcx                     /* its arguments, if it meets the rule */
	push	r10
	lea	rdx, [rsp + \s + 16]
	mov	rax, [rsp + \rax + 16]
	call	args_at_return
	pop	r10
	pop	rcx
	lea	rdx, [rsp + \s]
34:	UNMARK	r10
	.if \keep
	mov	[rsp + \s], r10
	.endif
	/* drop the entry and the abandoned ones above it (below S on this
	 * thread's stack); keep others (a coroutine's stack, a sigaltstack) */
	mov	r9, rcx                 /* j: next free index */
	inc	rcx
31:	cmp	rcx, [rsi + T_DEPTH]
	jae	33f
	mov	rdi, rcx
	shl	rdi, 4
	add	rdi, rsi
	mov	rax, [rdi + T_SHADOW]
	cmp	rax, rdx
	jae	32f
	OWNSTACK rax, rdx, 32f
	mov	r11, [rdi + T_SHADOW + 8] /* abandoned: drop */
	btr	r11, DETAIL_MARK
	jnc	35f
	push	rcx                     /* its arguments, if it meets the rule */
	push	r9
	push	r11
	mov	rdx, rax
	call	args_if_slow
	pop	r11
	pop	r9
	pop	rcx
	lea	rdx, [rsp + \s]
35:	UNMARK	r11
	inc	rcx
	jmp	31b
32:	mov	r11, r9
	shl	r11, 4
	add	r11, rsi
	mov	[r11 + T_SHADOW], rax
	mov	rax, [rdi + T_SHADOW + 8]
	mov	[r11 + T_SHADOW + 8], rax
	bt	rax, DETAIL_MARK        /* its side record moves with it */
	jnc	36f
	mov	r11, r9
	shl	r11, 6
	add	r11, [rsi + T_SIDE]
	mov	rdi, rcx
	shl	rdi, 6
	add	rdi, [rsi + T_SIDE]
	.irp	off, 0, 8, 16, 24, 32, 40, 48, 56
	mov	rax, [rdi + \off]
	mov	[r11 + \off], rax
	.endr
36:	inc	r9
	inc	rcx
	jmp	31b
33:	mov	[rsi + T_DEPTH], r9
	mov	eax, 0xffffffff
	lea	rdx, [rsp + \s]
	mov	r10, [rsp + \rax]      /* the return value */
	EVENT
.endm

.macro SIDEREC
	mov	r11, rcx
	shl	r11, 6
	add	r11, [rsi + T_SIDE]
.endm

/* Fill the side record of shadow entry rcx: the entry event's tick
 * ([rsp - 48]) and the argument registers as saved. Clobbers rax, r11. */
.macro SIDE
	SIDEREC
	mov	rax, [rsp - 48]
	mov	[r11], rax
	mov	rax, [rsp + E_RDI]
	mov	[r11 + 16], rax
	mov	rax, [rsp + E_RSI]
	mov	[r11 + 24], rax
	mov	rax, [rsp + E_RDX]
	mov	[r11 + 32], rax
	mov	eax, 1
	test	dword ptr [rsp + E_ID], F_ARGS3
	jnz	1f
	mov	rax, [rsp + E_RCX]
	mov	[r11 + 40], rax
	mov	rax, [rsp + E_R8]
	mov	[r11 + 48], rax
	mov	rax, [rsp + E_R9]
	mov	[r11 + 56], rax
	mov	eax, 2
1:	mov	[r11 + 8], rax
.endm

/* 0x000: entry stub. [rsp] = into the trampoline, [rsp+8] = id,
 * [rsp+16] = the caller's return address, in the slot S. */
entry:
	SAVE
	.set E_RET, 72               /* into the trampoline */
	.set E_ID, 80
	.set E_S, 88
	.set E_R9, 16                /* the argument registers, as saved */
	.set E_R8, 24
	.set E_RDI, 32
	.set E_RSI, 40
	.set E_RDX, 48
	.set E_RCX, 56
	mov	r8, [rip + data_ptr]
	LOOKUP
	test	rsi, rsi
	jz	unregistered
	mov	eax, [rsp + E_ID]
	test	eax, F_RESTORE
	jnz	restore
	test	eax, F_CTX
	jnz	context
	/* The frames this entry closes for the tracer go first: shadow
	 * entries at or below S on this thread's stack are abandoned frames
	 * (dropped), or at S, when the slot already goes to the return stub,
	 * the caller of a tail call (kept: its exit closes both). Those with
	 * arguments in a side record send them if they meet the rule, before
	 * the event that closes them. */
recorded:
	lea	rdx, [rsp + E_S]
	mov	rcx, [rsi + T_DEPTH]
20:	test	rcx, rcx
	jz	21f
	mov	rdi, rcx
	shl	rdi, 4
	add	rdi, rsi
	mov	r9, [rdi + T_SHADOW - 16]
	cmp	r9, rdx
	ja	21f
	OWNSTACK r9, rdx, 21f
	cmp	r9, rdx
	jne	22f
	mov	rax, [rsp + E_S]
	cmp	rax, [r8 + D_RETSTUB]
	jne	22f
	btr	qword ptr [rdi + T_SHADOW - 8], DETAIL_MARK  /* a tail call */
	jnc	21f
	push	rcx
	push	rdx
	dec	rcx
	call	args_if_slow
	pop	rdx
	pop	rcx
	jmp	21f
22:	mov	r9, [rdi + T_SHADOW - 8]
	btr	r9, DETAIL_MARK
	jnc	23f
	push	rcx
	push	rdx
	push	r9
	dec	rcx
	mov	rdx, [rdi + T_SHADOW - 16]
	call	args_if_slow
	pop	r9
	pop	rdx
	pop	rcx
23:	UNMARK	r9
	dec	rcx
	jmp	20b
21:	mov	[rsi + T_DEPTH], rcx
	mov	eax, [rsp + E_ID]
	mov	r10, [rsp + E_S]
	test	eax, F_DETAIL
	jz	plain
	cmp	qword ptr [r8 + D_DEFER], 0
	je	detail_entry
	and	eax, ~F_DETAIL          /* its arguments go to its side record */
plain:
	EVENT save=1
	/* hijack the return, unless the slot already goes to the return stub
	 * (a tail call from a probed function: its exit closes both) */
hijack:
	mov	rax, [rsp + E_S]
	cmp	rax, [r8 + D_RETSTUB]
	je	tail
	lea	rdx, [rsp + E_S]
	mov	rcx, [rsi + T_DEPTH]
	cmp	rcx, [rsi + T_CAP]
	jae	shadow_full
	DEFERS	24f
	mov	rax, [rsp + E_S]
	bts	rax, DETAIL_MARK
	jmp	25f
24:	mov	rax, [rsp + E_S]
25:	mov	rdi, rcx
	shl	rdi, 4
	add	rdi, rsi
	mov	[rdi + T_SHADOW], rdx
	mov	[rdi + T_SHADOW + 8], rax
	inc	rcx
	mov	[rsi + T_DEPTH], rcx
	/* A signal handler running probed calls between the entry's write
	 * and the depth's may have pushed (and popped) its own entry over
	 * ours: the depth now covers our index, no handler reuses it, write
	 * it again. The side record, written after, is ours alone too. */
	mov	[rdi + T_SHADOW], rdx
	mov	[rdi + T_SHADOW + 8], rax
	/* Which returns are stale (T_STALE, the return stub): a waiting
	 * call's and those of the frames open when it returns, taken here
	 * as those open now; a frame opened later is not, whatever index an
	 * abandoned one had. */
	lea	r9, [rcx - 1]
	test	dword ptr [rsp + E_ID], F_WAIT
	jz	97f
	mov	[rsi + T_STALE], rcx
	jmp	98f
97:	cmp	r9, [rsi + T_STALE]
	jae	98f
	mov	[rsi + T_STALE], r9
98:	bt	rax, DETAIL_MARK
	jnc	26f
	dec	rcx
	SIDE
26:	test	dword ptr [rsp + E_ID], F_CTXOPEN
	jnz	open
opened:
	test	dword ptr [rsp + E_ID], F_EXIT
	jnz	entry_done              /* its returns end it (exitsite) */
	/* The function runs called from `via`, whose return address is the
	 * return stub: it returns there by a return the CPU predicts, and
	 * the return stub goes back to the caller by one too (the return
	 * stack buffer still holds the caller's return address). The
	 * trampoline goes on at the je behind its call of this stub (ZF set)
	 * to `via`, which calls what follows the je, found in the id's slot
	 * (below the stack pointer then: the red zone). */
	mov	rax, [rsp + E_RET]
	add	rax, 6
	mov	[rsp + E_ID], rax
	RESTORE
	cmp	eax, eax                /* ZF: hijacked */
	ret	16                      /* the id and the return address go */
entry_done:
	RESTORE
	test	rsp, rsp                /* no ZF: the trampoline goes on, uncalled */
	ret	8
	/* A context component: open it if the ones before it are (the count
	 * is k), marking the shadow entry at rdi. */
open:
	mov	eax, [rsp + E_ID]
	shr	eax, CTX_SHIFT
	and	eax, CTX_MAX
	cmp	[rsi + T_CTX], rax
	jne	opened
	lea	rcx, [rax + 1]
	mov	[rsi + T_CTX], rcx
	shl	rax, 56
	bts	rax, 63
	or	[rdi + T_SHADOW + 8], rax
	jmp	opened
	/* A tail call from a probed function: its shadow entry (the top one,
	 * for the same slot) closes both. Its side record is the callee's
	 * from now on (the tracer closed the caller at this entry); a
	 * component opens there unless that entry already opened one. */
tail:
	mov	rcx, [rsi + T_DEPTH]
	test	rcx, rcx
	jz	entry_done
	dec	rcx
	mov	rdi, rcx
	shl	rdi, 4
	add	rdi, rsi
	lea	rdx, [rsp + E_S]
	cmp	[rdi + T_SHADOW], rdx
	jne	entry_done
	DEFERS	27f
	bts	qword ptr [rdi + T_SHADOW + 8], DETAIL_MARK
	SIDE
27:	test	dword ptr [rsp + E_ID], F_CTXOPEN
	jz	entry_done
	bt	qword ptr [rdi + T_SHADOW + 8], 63
	jc	entry_done
	jmp	open
	/* A function recorded only in a context: outside it, nothing. */
context:
	test	eax, F_CTXOPEN
	jnz	recorded
	mov	ecx, eax
	shr	ecx, CTX_SHIFT
	and	ecx, CTX_MAX
	cmp	[rsi + T_CTX], rcx
	jae	recorded
	mov	rdi, [rsi + T_RING]
	inc	qword ptr [rdi + R_SKIPPED]
	jmp	entry_done
detail_entry:
	test	eax, F_ARGS3
	jnz	detail_entry3
	EVENT 3
	jmp	hijack
detail_entry3:
	EVENT 2
	jmp	hijack
unregistered:
	lock inc qword ptr [r8 + D_UNREGISTERED]
	jmp	entry_done
shadow_full:
	lock inc qword ptr [r8 + D_SHADOW_FULL]
	jmp	entry_done
	/* An unwinder is about to read this thread's return addresses: put
	 * every hijacked one back and forget them (their frames close by
	 * stack pointer at the next event). */
restore:
	mov	rcx, [rsi + T_DEPTH]
	mov	rdx, [r8 + D_RETSTUB]
22:	test	rcx, rcx
	jz	23f
	dec	rcx
	mov	rdi, rcx
	shl	rdi, 4
	add	rdi, rsi
	mov	rax, [rdi + T_SHADOW]
	cmp	[rax], rdx
	jne	24f                     /* not hijacked (exit probes) */
	mov	r9, [rdi + T_SHADOW + 8]
	shl	r9, 16                  /* no context or detail mark */
	shr	r9, 16
	mov	[rax], r9
	/* its frame closes later, when the tracer sees it gone: its
	 * arguments go now, whatever its time so far */
24:	bt	qword ptr [rdi + T_SHADOW + 8], DETAIL_MARK
	jnc	22b
	push	rcx
	push	rdx
	mov	rdx, rax
	call	args_now
	pop	rdx
	pop	rcx
	jmp	22b
23:	mov	qword ptr [rsi + T_DEPTH], 0
	mov	qword ptr [rsi + T_CTX], 0  /* its frames are forgotten too */
	jmp	entry_done

/* ARGS event for the frame of shadow entry rcx (its side record) at slot
 * rdx if it meets the rule: at its return, rax its return value
 * (args_at_return); abandoned, so it did not return (args_if_slow); or
 * whatever its time so far, when an unwinder takes it (args_now). r8 =
 * data, rsi = state. Clobbers rax, rcx, rdx, rdi, r9, r10, r11. */
args_at_return:
	SIDEREC
	cmp	qword ptr [r8 + D_COND_AT], COND_RET
	jne	45f
	HOLDS	42f
	jmp	45f
args_if_slow:
	SIDEREC
	cmp	qword ptr [r8 + D_COND_AT], COND_RET
	je	42f                     /* no return, no return value to meet it */
45:	cmp	qword ptr [r8 + D_SLOW_TICKS], 0
	je	43f
	mov	r9, rdx
	rdtsc
	shl	rdx, 32
	or	rax, rdx
	sub	rax, [r11]
	cmp	rax, [r8 + D_SLOW_TICKS]
	jb	42f
	mov	rdx, r9
	jmp	43f
args_now:
	SIDEREC
	cmp	qword ptr [r8 + D_COND_AT], COND_RET
	je	42f
43:	push	qword ptr [r11 + 56]
	push	qword ptr [r11 + 48]
	push	qword ptr [r11 + 40]
	push	qword ptr [r11 + 32]
	push	qword ptr [r11 + 24]
	push	qword ptr [r11 + 16]
	push	qword ptr [r11 + 8]
	mov	eax, ARGS_FOR
	cmp	qword ptr [rsp], 2
	jb	44f
	dec	eax
44:	xor	r10d, r10d
	EVENT var=1
	add	rsp, 56
42:	ret

	.org 0xd00
/* 0xd00: where a trampoline goes when its entry stub hijacked the return
 * (`opened`): the call of the rest of the trampoline, at the address in
 * the red zone where the id was. That call pushes the return stub's
 * address, in the slot S of the caller's return address: the one in use
 * (D_RETSTUB), whatever the copy, so via goes to the copy of via_call
 * behind it (via_ptr; this one's in that copy). */
via:
	jmp	qword ptr [rip + via_ptr]
via_call:
	call	qword ptr [rsp - 16]
/* 0xd0a: the return stub: a probed function returned here; rsp = S + 8. */
retstub:
	sub	rsp, 8                  /* [S]: the original return address, later */
	SAVE
	.set R_S, 72
	.set R_RAX, 64
	mov	r8, [rip + data_ptr]
	LOOKUP
	test	rsi, rsi
	jz	lost
	POPENTRY R_S, R_RAX, lost, 1
	/* Back to the caller. Called from `via`, the return stack buffer
	 * holds the caller's entry below via's: by a ret. A frame the tracer
	 * found running at attach (INFLIGHT_MARK) was not: its own ret (to
	 * here) took its call's entry, and a ret would take its caller's and
	 * leave every return above mispredicted: by an indirect jump. Unless
	 * the return is stale: untraced, the kernel's calls during the system
	 * call took those entries, and the returns above it are mispredicted;
	 * by a ret they are traced too, as the program's own time
	 * (docs/design.md, Stale returns). */
	mov	rax, [rsi + T_DEPTH]    /* the returning frame's index */
	cmp	rax, [rsi + T_STALE]
	jae	37f
	mov	[rsi + T_STALE], rax
	btr	qword ptr [rsp + R_S], INFLIGHT_MARK
	RESTORE
	ret
37:	btr	qword ptr [rsp + R_S], INFLIGHT_MARK
	jc	39f
	RESTORE
	ret
	/* [rsp-8] is safe from signal frames (red zone). */
39:	RESTORE
	lea	rsp, [rsp + 8]
	jmp	qword ptr [rsp - 8]
lost:
	/* A return with no shadow entry: nowhere to go. Never expected; a
	 * trap the tracer (if alive) reports, rather than a wild jump. */
	lock inc qword ptr [r8 + D_LOST]
	ud2

/* The counting probe's stub (--counted). [rsp] = into the trampoline,
 * [rsp+8] = id, [rsp+16] = the caller's return address. One more call of
 * (return address, id) in the thread's count table, beside its ring: no
 * tick, no event, no hijack, so the call runs as untraced but for these
 * few instructions. The table is the thread's own: no lock. An empty
 * entry is claimed with cmpxchg, atomic against a signal handler on this
 * thread counting in between (one that finds an entry claimed but its id
 * not written yet takes another: the tracer adds up duplicates). */
count:
	/* Six registers saved, not SAVE's nine: this stub runs on calls of
	 * a few ns, and its pushes and pops were a third of its cost. */
	SAVE6
	.set C_ID, 56
	.set C_RET, 64
	/* The thread's state, as LOOKUP finds it: r8 = data, rax = thread
	 * pointer, rcx = slot, rsi = probes left. */
	mov	r8, [rip + data_ptr]
	mov	rax, fs:0
	mov	rcx, rax
	shr	rcx, 12
	imul	rcx, rcx, 0x5bd1e995
	shr	rcx, 52
	mov	esi, TABLE_MASK + 1
46:	mov	rdx, rcx
	shl	rdx, 4
	cmp	[r8 + rdx + D_TABLE], rax
	je	47f
	cmp	qword ptr [r8 + rdx + D_TABLE], 0
	je	44f
	inc	ecx
	and	ecx, TABLE_MASK
	dec	esi
	jnz	46b
	jmp	44f
47:	mov	rsi, [r8 + rdx + D_TABLE + 8]
	test	rsi, rsi
	jz	44f
	mov	rax, [rsp + C_RET]
	cmp	rax, [r8 + D_RETSTUB]
	je	39f
	/* Its count table: r8 = ring, rsi = return address, rax = id,
	 * rcx = entry, rdi = probes left. */
38:	mov	r8, [rsi + T_RING]
	mov	rsi, rax
	mov	eax, [rsp + C_ID]
	mov	rcx, 0x9e3779b97f4a7c15
	imul	rcx, rsi
	shr	rcx, 64 - COUNT_BITS
	mov	edi, COUNT_PROBES
40:	mov	rdx, rcx
	shl	rdx, 5
	cmp	[r8 + rdx + R_COUNTS], rsi
	jne	41f
	cmp	[r8 + rdx + R_COUNTS + 8], rax
	je	43f
	jmp	42f
41:	cmp	qword ptr [r8 + rdx + R_COUNTS], 0
	jne	42f
	xor	eax, eax
	cmpxchg	[r8 + rdx + R_COUNTS], rsi
	mov	eax, [rsp + C_ID]
	jne	40b                     /* a handler took it: look again */
	mov	[r8 + rdx + R_COUNTS + 8], rax
	jmp	43f
42:	inc	ecx
	and	ecx, COUNT_MASK
	dec	edi
	jnz	40b
	jmp	49f
43:	inc	qword ptr [r8 + rdx + R_COUNTS + 16]
45:	RESTORE6
	test	rsp, rsp                /* no ZF: the trampoline goes on, uncalled */
	ret	8
44:	lock inc qword ptr [r8 + D_UNREGISTERED]
	jmp	45b
39:	/* A tail jump from a function whose return was hijacked brought the
	 * call here: its return slot, ours now, holds the return stub. The
	 * call counts for the call site in its shadow entry for that slot
	 * (the top one), as when the jumping function's exit probe ended it
	 * at the jump. */
	mov	rcx, [rsi + T_DEPTH]
	test	rcx, rcx
	jz	38b
	shl	rcx, 4
	lea	rdx, [rsp + C_RET]
	cmp	rdx, [rsi + rcx + T_SHADOW - 16]
	jne	38b
	mov	rax, [rsi + rcx + T_SHADOW - 8]
	shl	rax, 16                 /* its marks off: the address, */
	shr	rax, 16
	bts	rax, TAIL_MARK          /* marked: no call there returns to it */
	jmp	38b
49:	/* No room in the table: the call goes to the ring, a COUNTED event
	 * {id, return address} the tracer adds to the thread's arcs. Counts
	 * stay exact, at an event's cost, for the call sites past the
	 * table's. */
	push	r9
	push	r10
	push	r11
	mov	r11, rsi                /* the return address it counts for */
	mov	r8, [rip + data_ptr]
	LOOKUP
	test	rsi, rsi
	jz	48f
	mov	edx, [rsp + 24 + C_ID]
	mov	r10, r11
	mov	eax, COUNTED_ID
	EVENT
48:	pop	r11
	pop	r10
	pop	r9
	jmp	45b

/* An exit probe at a return of a function (F_EXIT): its trampoline runs
 * the moved instructions before the ret, calls this, then rets itself.
 * [rsp] = into the trampoline, [rsp+8] = the return address, slot S. */
exitsite:
	SAVE
	.set X_S, 80
	.set X_RAX, 64
	mov	r8, [rip + data_ptr]
	mov	rax, [rsp + X_S]
	cmp	rax, [r8 + D_RETSTUB]
	je	59f                     /* hijacked: the return stub ends it */
	LOOKUP
	test	rsi, rsi
	jz	59f
	POPENTRY X_S, X_RAX, 59f, 0
	mov	rax, [rsi + T_DEPTH]
	cmp	rax, [rsi + T_STALE]
	jae	59f
	mov	[rsi + T_STALE], rax
59:	RESTORE
	ret

/* A tail jump of a function with exit probes (F_EXIT): its trampoline
 * calls this, then jumps on. The frame's return goes to the return stub
 * from here, as for a frame running at attach (INFLIGHT_MARK: its return
 * into the stub is not predicted, the stub leaves by a jump), so that the
 * callee's return ends both, whatever probe the callee has, or none.
 * [rsp] = into the trampoline, [rsp+8] = the return address, slot S. */
tailsite:
	SAVE
	mov	r8, [rip + data_ptr]
	mov	rax, [rsp + X_S]
	cmp	rax, [r8 + D_RETSTUB]
	je	69f                     /* already goes there */
	LOOKUP
	test	rsi, rsi
	jz	69f
	lea	rdx, [rsp + X_S]
	mov	rcx, [rsi + T_DEPTH]
60:	test	rcx, rcx
	jz	69f                     /* no entry: opened before the probe */
	dec	rcx
	mov	rdi, rcx
	shl	rdi, 4
	cmp	[rsi + rdi + T_SHADOW], rdx
	jne	60b
	bts	qword ptr [rsi + rdi + T_SHADOW + 8], INFLIGHT_MARK
	mov	rax, [r8 + D_RETSTUB]
	mov	[rsp + X_S], rax
69:	RESTORE
	ret

	.org 0x1840
data_ptr:
	.quad 0
via_ptr:
	.quad 0
