package attach

import (
	"errors"
	"fmt"
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

// load is unwind.Load through the cache: the file opened once, its
// identity that of the very file parsed.
func (c cfiCache) load(path string, bias, lo, hi uint64) (*unwind.Module, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load CFI: %w", err)
	}
	defer f.Close()
	var k cfiFile
	fi, err := f.Stat()
	if err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			k = cfiFile{path, st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano()}
			if m, ok := c[k]; ok {
				if m == nil {
					return nil, fmt.Errorf("load CFI of %s: %w", path, unwind.ErrNoCFI)
				}
				return m.Placed(bias, lo, hi), nil
			}
		}
	}
	m, err := unwind.LoadReader(f, bias, lo, hi)
	if k.path != "" {
		switch {
		case err == nil:
			c[k] = m
		case errors.Is(err, unwind.ErrNoCFI):
			c[k] = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("load CFI of %s: %w", path, err)
	}
	m.Path = path
	return m, nil
}
