package model

import (
	"slices"
	"strings"
)

// The waiting calls: C library functions that block the
// calling thread — sleeping, waiting for I/O or readiness, locks,
// condition variables, barriers, signals, children. A thread inside one is
// not computing: its time there is blocked time, which summary reports and
// render draws apart from the busy time. This is the only list: the
// tracer's default set (DefaultLibCalls), summary and render all read it.
// Sorted (TestCallListsSorted).
var waitingCalls = []string{
	"accept", "accept4",
	"clock_nanosleep", "connect",
	"epoll_pwait", "epoll_pwait2", "epoll_wait",
	"fdatasync", "flock", "fsync",
	"lockf", "lockf64",
	"mq_receive", "mq_send", "mq_timedreceive", "mq_timedsend",
	"msgrcv", "msgsnd",
	"nanosleep",
	"pause", "poll", "ppoll",
	"pread", "pread64", "preadv", "preadv2",
	"pselect",
	"pthread_barrier_wait",
	"pthread_cond_clockwait", "pthread_cond_timedwait", "pthread_cond_wait",
	"pthread_join",
	"pthread_mutex_clocklock", "pthread_mutex_lock", "pthread_mutex_timedlock",
	"pthread_rwlock_rdlock", "pthread_rwlock_wrlock",
	"pthread_timedjoin_np",
	"pwrite", "pwrite64", "pwritev", "pwritev2",
	"read", "readv",
	"recv", "recvfrom", "recvmmsg", "recvmsg",
	"select",
	"sem_clockwait", "sem_timedwait", "sem_wait",
	"semop", "semtimedop",
	"send", "sendmmsg", "sendmsg", "sendto",
	"sigsuspend", "sigtimedwait", "sigwait", "sigwaitinfo",
	"sleep",
	"system",
	"usleep",
	"wait", "wait3", "wait4", "waitid", "waitpid",
	"write", "writev",
}

// creationCalls are the C library functions that create threads and
// processes: traced by default so that a profile sees who spawned whom.
// Sorted.
var creationCalls = []string{
	"fork", "posix_spawn", "posix_spawnp", "pthread_create", "system", "vfork",
}

// creationEntries are further entry points that create threads and
// processes (what the default ones call, or their aliases): not traced by
// default, but skipped like them when a spawning subroutine is looked for
// (docs/design.md, Data model) should --lib trace them.
var creationEntries = []string{"__libc_fork", "_Fork", "clone", "clone3"}

// IsCreationCall tells whether name creates threads or processes: a
// spawning subroutine is the innermost traced function that is not one.
func IsCreationCall(name string) bool {
	return slices.Contains(creationCalls, name) || slices.Contains(creationEntries, name)
}

// WaitingCalls returns the names of the waiting calls, sorted; the slice
// is a copy.
func WaitingCalls() []string { return slices.Clone(waitingCalls) }

// DefaultLibCalls returns the library functions a tracer traces by
// default in the C library: the waiting calls, where a program's wall
// time goes while it does not compute, and the creation calls. Sorted, a
// copy.
func DefaultLibCalls() []string {
	out := slices.Concat(waitingCalls, creationCalls)
	slices.Sort(out)
	return slices.Compact(out)
}

// IsWaitingCall reports whether sym, a C library symbol, is a waiting
// call. Symbol versions ("read@@GLIBC_2.2.5") and the C library's internal
// prefixes ("__libc_read", "__nanosleep") are ignored, so the aliases a
// profile may show for one function all count.
func IsWaitingCall(sym string) bool {
	if i := strings.IndexByte(sym, '@'); i > 0 {
		sym = sym[:i]
	}
	sym = strings.TrimPrefix(sym, "__libc_")
	sym = strings.TrimLeft(sym, "_")
	_, ok := slices.BinarySearch(waitingCalls, sym)
	return ok
}

// WaitingFuncs marks p's waiting functions: library functions (not the
// program's own, which may reuse a name such as read) whose symbol is a
// waiting call. Indexed by function.
func (p *Profile) WaitingFuncs() []bool {
	w := make([]bool, len(p.Functions))
	for f := range p.Functions {
		w[f] = p.IsWaitingFunc(f)
	}
	return w
}

// IsWaitingFunc tells whether function f of p is a waiting call, as
// WaitingFuncs marks them.
func (p *Profile) IsWaitingFunc(f int) bool {
	fn := &p.Functions[f]
	return fn.Module != 0 && !p.isMainModule(fn.Module) && IsWaitingCall(fn.Name)
}
