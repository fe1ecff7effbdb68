package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lowSpace is the free space under which record and attach warn, before
// tracing, that the profile may not fit. A profile takes about 13 bytes
// per calling context compressed (model.Write of a synthetic profile of a
// million contexts: 13 MB): 16 MiB holds a large one, and a disk in use
// rarely has less free unless it is about to fill.
const lowSpace = 16 << 20

// warnLowSpace says in one line on w when the file system of the output
// out has less than lowSpace free for this user. Nothing for standard
// output or a device, or when the space cannot be read (the write will
// tell).
func warnLowSpace(w io.Writer, out string) {
	if isStream(out) {
		return
	}
	dir := filepath.Dir(out)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // "." would say little
	}
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return
	}
	if msg := lowSpaceWarning(dir, st.Bavail*uint64(st.Bsize)); msg != "" {
		fmt.Fprintln(w, msg)
	}
}

// lowSpaceWarning is the warning for free bytes free in dir, "" when
// there is enough.
func lowSpaceWarning(dir string, free uint64) string {
	if free >= lowSpace {
		return ""
	}
	return fmt.Sprintf("profile: warning: only %s free in %s: the profile may not fit (it would then be kept in %s)",
		byteSize(free), dir, os.TempDir())
}

// byteSize is n bytes in the largest binary unit that keeps it at least
// 1, one decimal rounded down: never more than there is.
func byteSize(n uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift {
			tenths := n>>u.shift*10 + (n&(1<<u.shift-1))*10>>u.shift // n*10>>shift, without overflow
			return fmt.Sprintf("%d.%d %s", tenths/10, tenths%10, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
