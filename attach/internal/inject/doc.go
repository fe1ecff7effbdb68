// Package inject runs code in a stopped thread of a traced process: one
// system call at a time (mmap, munmap, rt_sigaction, getpid), through the
// injection chain in the text slack when there is one (a thread the
// tracer leaves mid-call goes on as if nothing happened) or through
// `syscall; int3` at a site the caller names. It knows nothing of the
// tracee loop: what the loop must hear of the thread (a stop that is not
// the injection's, the registers to give back, a healer to tell) goes
// through Thread.
package inject
