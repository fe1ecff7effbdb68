package instrument

import (
	"sort"

	"github.com/profile-dev/profile/model"
)

// defaultBlocking is the set of library functions traced by default in
// every library: model's waiting calls (sleeping, waiting for I/O, locks,
// condition variables, children) and the calls that create threads and
// processes. They are where a program's wall-clock time goes while it is
// not computing, so a profile needs them even though it does not trace
// libraries otherwise. model defines the set once, for the tracer and the
// reports alike; sorted.
var defaultBlocking = model.DefaultLibCalls()

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
