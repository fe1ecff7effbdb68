// Package heal is the tracer's side of the heal area: the target's own
// SIGTRAP handler (healcode/heal.S, embedded as heal.bin) and the table of
// every byte the tracer changed in the target's text. If the tracer dies,
// the kernel detaches the target and delivers the SIGTRAPs of our int3s to
// it; the handler then puts every original byte back and resumes each
// thread where it would have gone. While the tracer lives, ptrace
// suppresses those SIGTRAPs and the handler never runs.
//
// The package writes the area and reads a killed profiler's; mapping it
// and installing the handler (injected system calls) are the engine's.
package heal
