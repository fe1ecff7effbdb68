// Package heal is the tracer's side of the heal area: the target's own
// SIGTRAP handler (healcode/heal.S, embedded as heal.bin) and the table of
// every byte the tracer changed in the target's text. If the tracer dies,
// the kernel detaches the target and delivers the SIGTRAPs of our int3s to
// it; the handler then puts every original byte back and resumes each
// thread where it would have gone. While the tracer lives, ptrace
// suppresses those SIGTRAPs and the handler never runs.
//
// The area also holds the park handler (park.go), the target's SIGURG
// handler while a thread another tracer holds shares the process: asked
// by the tracer, such a thread waits there while code changes.
//
// The package writes the area and reads a killed profiler's; mapping it
// and installing the handler (injected system calls) are the engine's.
package heal
