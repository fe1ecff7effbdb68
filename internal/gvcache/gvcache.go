// Package gvcache gives go-graphviz a private compilation cache.
//
// go-graphviz compiles its embedded Graphviz (WebAssembly) in a package
// init, caching the result under $TMPDIR/go-graphviz, and panics when that
// shared directory holds an entry another user wrote. This package's init
// runs first (Go initializes ready packages in import-path order, and
// github.com/profile-dev sorts before github.com/tetratelabs/wazero, which
// go-graphviz waits for) and points TMPDIR at a directory of this user's
// own; Restore puts TMPDIR back before anything else runs, so programs we
// launch see the environment unchanged.
package gvcache

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// original is TMPDIR as the process received it. Set once, in init,
// before any goroutine exists.
var original, hadOriginal = os.LookupEnv("TMPDIR")

func init() {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("profile-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil || !ownDir(dir) {
		// No private place: go-graphviz then compiles without a cache.
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("profile-%d-nocache", os.Getuid()), "missing")
	}
	os.Setenv("TMPDIR", dir)
}

// ownDir tells whether dir is a real directory of ours, not a planted link.
func ownDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// Restore puts TMPDIR back as the process received it.
func Restore() {
	if hadOriginal {
		os.Setenv("TMPDIR", original)
	} else {
		os.Unsetenv("TMPDIR")
	}
}
