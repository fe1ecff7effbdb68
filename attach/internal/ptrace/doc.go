// Package ptrace holds the engine's ptrace requests, waits and accesses
// to a tracee's memory: nothing else in the engine calls ptrace. Every
// request must come from the engine's locked OS thread: ptrace requests
// for a tracee from any other thread fail with ESRCH.
package ptrace
