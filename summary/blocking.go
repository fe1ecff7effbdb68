package summary

import (
	"path"
	"strings"
)

// BlockingCalls is the set of waiting calls whose time the summary reports
// as blocked (DESIGN §3.3, §4): patterns in path.Match syntax over a
// function's symbol. This list is the only place that defines the set.
var BlockingCalls = []string{
	// readiness and I/O
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect", "pselect6",
	"read", "readv", "write", "writev", "pread*", "pwrite*",
	"recv*", "send*", "accept*", "connect",
	// sleeping
	"nanosleep", "clock_nanosleep", "usleep", "sleep",
	// synchronisation
	"pthread_cond_*wait", "pthread_mutex_lock", "pthread_join",
	"sem_wait", "sem_timedwait", "sem_clockwait",
	// children
	"wait", "waitpid", "waitid", "wait4",
}

// IsBlocking reports whether the function named sym (a demangled symbol,
// without module) is a waiting call. Symbol versions ("read@@GLIBC_2.2.5")
// and libc's internal prefixes ("__libc_read", "__nanosleep") are ignored.
func IsBlocking(sym string) bool {
	if i := strings.IndexByte(sym, '@'); i > 0 {
		sym = sym[:i]
	}
	sym = strings.TrimPrefix(sym, "__libc_")
	sym = strings.TrimLeft(sym, "_")
	for _, pat := range BlockingCalls {
		if ok, _ := path.Match(pat, sym); ok {
			return true
		}
	}
	return false
}
