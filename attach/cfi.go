package attach

import (
	"errors"
	"os"
	"syscall"

	"github.com/profile-dev/profile/instrument/unwind"
)

// cfiFile identifies a file's contents as the kernel sees them: a module
// rewritten in place, or replaced under the same path, is another.
type cfiFile struct {
	path       string
	dev, ino   uint64
	size, mtim int64
}

// cfiCache is the call-frame information of the files the session's
// processes map, by file: each process places it at its own addresses
// (unwind.Module.Placed). Parsing a library's .eh_frame anew for every
// process was most of what a new process cost the unwinder (libc's, for
// each of a shell loop's 300 children: 3.6% of the profiler's CPU).
type cfiCache map[cfiFile]*unwind.Module

// load is unwind.Load through the cache.
func (c cfiCache) load(path string, bias, lo, hi uint64) (*unwind.Module, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return unwind.Load(path, bias, lo, hi)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return unwind.Load(path, bias, lo, hi)
	}
	k := cfiFile{path, st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano()}
	if m, ok := c[k]; ok {
		if m == nil {
			return nil, unwind.ErrNoCFI
		}
		return m.Placed(bias, lo, hi), nil
	}
	m, err := unwind.Load(path, bias, lo, hi)
	switch {
	case err == nil:
		c[k] = m
	case errors.Is(err, unwind.ErrNoCFI):
		c[k] = nil
	}
	return m, err
}
