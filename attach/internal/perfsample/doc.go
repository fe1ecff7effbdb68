// Package perfsample samples one thread's CPU time with perf_event_open:
// a task-clock software event that writes the instruction pointer and the
// time (CLOCK_MONOTONIC_RAW) into a ring mapped from the kernel every so
// many nanoseconds the thread spends on a CPU. The engine opens one per
// traced thread and reads it before it drains the thread's probe events,
// so that busy times come from samples placed among the events. There are
// no goroutines here: the caller reads when it wants.
package perfsample
