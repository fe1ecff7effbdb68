package instrument

import "sort"

// defaultBlocking is the curated set of library functions traced by default
// in every library: calls that block (sleeping, waiting for I/O, locks,
// condition variables, children) or that create threads and processes. They
// are where a program's wall-clock time goes while it is not computing, so a
// profile needs them even though it does not trace libraries otherwise.
// Keep it sorted; TestDefaultBlockingSorted checks.
var defaultBlocking = []string{
	"accept",
	"accept4",
	"clock_nanosleep",
	"connect",
	"epoll_pwait",
	"epoll_pwait2",
	"epoll_wait",
	"fdatasync",
	"flock",
	"fork",
	"fsync",
	"lockf",
	"lockf64",
	"mq_receive",
	"mq_send",
	"mq_timedreceive",
	"mq_timedsend",
	"msgrcv",
	"msgsnd",
	"nanosleep",
	"pause",
	"poll",
	"posix_spawn",
	"posix_spawnp",
	"ppoll",
	"pread",
	"pread64",
	"preadv",
	"preadv2",
	"pselect",
	"pthread_barrier_wait",
	"pthread_cond_clockwait",
	"pthread_cond_timedwait",
	"pthread_cond_wait",
	"pthread_create",
	"pthread_join",
	"pthread_mutex_clocklock",
	"pthread_mutex_lock",
	"pthread_mutex_timedlock",
	"pthread_rwlock_rdlock",
	"pthread_rwlock_wrlock",
	"pthread_timedjoin_np",
	"pwrite",
	"pwrite64",
	"pwritev",
	"pwritev2",
	"read",
	"readv",
	"recv",
	"recvfrom",
	"recvmmsg",
	"recvmsg",
	"select",
	"sem_clockwait",
	"sem_timedwait",
	"sem_wait",
	"semop",
	"semtimedop",
	"send",
	"sendmmsg",
	"sendmsg",
	"sendto",
	"sigsuspend",
	"sigtimedwait",
	"sigwait",
	"sigwaitinfo",
	"sleep",
	"system",
	"usleep",
	"vfork",
	"wait",
	"wait3",
	"wait4",
	"waitid",
	"waitpid",
	"write",
	"writev",
}

// DefaultBlocking returns the names of the library functions traced by
// default in every library, sorted. The slice is a copy.
func DefaultBlocking() []string { return append([]string(nil), defaultBlocking...) }

func isDefaultBlocking(name string) bool {
	i := sort.SearchStrings(defaultBlocking, name)
	return i < len(defaultBlocking) && defaultBlocking[i] == name
}

// blockingLibraries are the base-name prefixes of the libraries that export
// the default-blocking functions: the C library and, on glibc before 2.34 and
// musl, the libraries split from it. Other libraries are not opened just to
// look for them, which saves parsing every library of a large program.
var blockingLibraries = []string{
	"ld-musl-",
	"libc.",
	"libc-",
	"libpthread.",
	"libpthread-",
	"librt.",
	"librt-",
}
