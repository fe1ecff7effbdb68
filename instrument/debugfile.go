package instrument

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// DefaultDebugDir is where distributions install separate debug files
// (Debian's *-dbg and *-dbgsym packages, Fedora's debuginfo).
const DefaultDebugDir = "/usr/lib/debug"

// Where a module's function symbols came from, as Module.SymbolsFrom
// starts: the file itself is "".
const (
	FromBuildID    = "build-id"
	FromDebuglink  = "debuglink"
	FromDebuginfod = "debuginfod"
)

// DebugSearch finds the separate debug file of a stripped module, where
// gdb looks for it: the build-id directory, the .gnu_debuglink name, then
// debuginfod. A debug file is used only when its build ID is the
// module's (or, for a module without one, its CRC is the debuglink's):
// one of another build would name the wrong code at every address.
//
// It is safe for concurrent use.
type DebugSearch struct {
	// Dir is the global debug directory: Dir/.build-id/xx/yyyy.debug, and
	// Dir followed by the module's directory for its debuglink.
	Dir string
	// Debuginfod, when set, is asked when no local file matches.
	Debuginfod *Debuginfod
	// Warn, when set, is told once per debug file why it was refused.
	Warn func(string)

	mu     sync.Mutex
	warned map[string]bool
	missed map[string]bool // build IDs debuginfod did not have
}

// debugFile is a separate debug file found for a module.
type debugFile struct {
	f    *elf.File
	from string // FromBuildID etc.
	at   string // its path or URL
}

// find returns the debug file of the module at path, opened as f with
// build ID id, or nil when there is none that matches.
func (d *DebugSearch) find(path string, f *elf.File, id string) *debugFile {
	if id != "" && isHex(id) && len(id) > 2 {
		p := filepath.Join(d.Dir, ".build-id", id[:2], id[2:]+".debug")
		if df := d.try(p, path, id, 0, false); df != nil {
			df.from = FromBuildID
			return df
		}
	}
	if name, crc, ok := debuglink(f); ok {
		for _, p := range debuglinkPaths(d.Dir, path, name) {
			if df := d.try(p, path, id, crc, true); df != nil {
				df.from = FromDebuglink
				return df
			}
		}
	}
	if d.Debuginfod == nil || id == "" || d.missing(id, false) {
		return nil
	}
	p, url, err := d.Debuginfod.Fetch(id)
	if err != nil {
		d.missing(id, true)
		if !errors.Is(err, errNotOnServers) {
			// Said once: a server down fails every module alike.
			d.warn(FromDebuginfod, fmt.Sprintf("debuginfod: %v", err))
		}
		return nil
	}
	if df := d.try(p, path, id, 0, false); df != nil {
		df.from, df.at = FromDebuginfod, url
		return df
	}
	return nil
}

// missing tells whether debuginfod had no debug file for build ID id,
// and with set records that it had none: a miss is not asked again (a
// hit is in the cache).
func (d *DebugSearch) missing(id string, set bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if set {
		if d.missed == nil {
			d.missed = map[string]bool{}
		}
		d.missed[id] = true
	}
	return d.missed[id]
}

// try opens the candidate debug file p for the module at path: nil when
// there is none, it is not ELF, or it is of another build (said once).
func (d *DebugSearch) try(p, path, id string, crc uint32, checkCRC bool) *debugFile {
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	df, err := elf.Open(p)
	if err != nil {
		d.warn(p, fmt.Sprintf("debug file %s for %s not used: %v", p, path, err))
		return nil
	}
	got := buildID(df)
	switch {
	case id != "" && got != id:
		if got == "" {
			got = "none"
		}
		d.warn(p, fmt.Sprintf("debug file %s not used: its build id %s is not %s's (%s)", p, got, path, id))
	case id == "" && !checkCRC:
		d.warn(p, fmt.Sprintf("debug file %s not used: %s has no build id to match it with", p, path))
	case id == "" && fileCRC(p) != crc:
		d.warn(p, fmt.Sprintf("debug file %s not used: its CRC is not the one %s's debuglink gives", p, path))
	default:
		return &debugFile{f: df, at: p}
	}
	df.Close()
	return nil
}

// warn passes msg on the first time key (a debug file) is refused.
func (d *DebugSearch) warn(key, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.Warn == nil || d.warned[key] {
		return
	}
	if d.warned == nil {
		d.warned = map[string]bool{}
	}
	d.warned[key] = true
	d.Warn(msg)
}

// debuglink reads .gnu_debuglink: a file name, NUL, padding to 4 bytes,
// and the CRC-32 of the debug file.
func debuglink(f *elf.File) (name string, crc uint32, ok bool) {
	s := f.Section(".gnu_debuglink")
	if s == nil {
		return "", 0, false
	}
	data, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	n := bytes.IndexByte(data, 0)
	if n <= 0 {
		return "", 0, false
	}
	off := (n + 4) &^ 3
	if off+4 > len(data) {
		return "", 0, false
	}
	name = string(data[:n])
	// A name with a directory would reach outside the places searched.
	if name != filepath.Base(name) || name == "." || name == ".." {
		return "", 0, false
	}
	return name, binary.LittleEndian.Uint32(data[off:]), true
}

// debuglinkPaths are where gdb looks for a debuglink name of the file at
// path: beside it, in .debug beside it, and under the debug directory
// followed by the file's directory.
func debuglinkPaths(dir, path, name string) []string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		path = abs
	}
	here := filepath.Dir(path)
	out := []string{
		filepath.Join(here, name),
		filepath.Join(here, ".debug", name),
		filepath.Join(dir, here, name),
	}
	// The file itself is no debug file of its own.
	if out[0] == path {
		out = out[1:]
	}
	return out
}

// fileCRC is the debuglink CRC (IEEE CRC-32) of the file at p, 0 when it
// cannot be read.
func fileCRC(p string) uint32 {
	f, err := os.Open(p)
	if err != nil {
		return 0
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, f); err != nil {
		return 0
	}
	return h.Sum32()
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
