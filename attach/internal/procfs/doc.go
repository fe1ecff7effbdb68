// Package procfs reads what the engine needs of /proc: a process's
// executable, arguments and status, its tasks, a task's tracer and
// scheduler counters, a mapping's protection.
package procfs
