package instrument

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End, Offset uint64
	Perms              string // "r-xp" and the like
	Dev                string // "major:minor", hex
	Inode              uint64
	Path               string // "" for anonymous memory, "[vdso]" and the like for pseudo-files
}

// Exec reports whether the mapping is executable.
func (m Mapping) Exec() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// deletedSuffix is what the kernel appends to the path of a mapped file that
// has since been unlinked (for example a library replaced by an upgrade).
const deletedSuffix = " (deleted)"

// Deleted reports whether the mapped file was unlinked after it was mapped:
// the path may now name a different file, so it must not be opened by name.
func (m Mapping) Deleted() bool { return strings.HasSuffix(m.Path, deletedSuffix) }

// FileBacked reports whether the mapping comes from a regular file (not
// anonymous memory and not [vdso], [stack] and the like).
func (m Mapping) FileBacked() bool { return strings.HasPrefix(m.Path, "/") }

// ParseMaps parses the text of /proc/PID/maps. It reads it whole: the
// mappings' strings share that one text (the engine reads the maps of a
// process many times over; a buffer per line was most of its garbage).
func ParseMaps(r io.Reader) ([]Mapping, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read maps: %w", err)
	}
	text := string(b)
	out := make([]Mapping, 0, strings.Count(text, "\n")+1)
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMapsLine(line)
		if err != nil {
			return nil, fmt.Errorf("maps line %d %q: %w", n, line, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// parseMapsLine parses "start-end perms offset dev inode   path". The path is
// everything after the inode with the padding removed; it may contain
// spaces, so it is not split like the other fields.
func parseMapsLine(line string) (Mapping, error) {
	var m Mapping
	rest := line
	field := func() string {
		rest = strings.TrimLeft(rest, " \t")
		i := strings.IndexAny(rest, " \t")
		if i < 0 {
			i = len(rest)
		}
		f := rest[:i]
		rest = rest[i:]
		return f
	}
	addrs, perms, off, dev, ino := field(), field(), field(), field(), field()
	start, end, ok := strings.Cut(addrs, "-")
	if !ok {
		return m, fmt.Errorf("address range %q has no '-'", addrs)
	}
	var err error
	if m.Start, err = strconv.ParseUint(start, 16, 64); err != nil {
		return m, fmt.Errorf("start address: %w", err)
	}
	if m.End, err = strconv.ParseUint(end, 16, 64); err != nil {
		return m, fmt.Errorf("end address: %w", err)
	}
	if m.Offset, err = strconv.ParseUint(off, 16, 64); err != nil {
		return m, fmt.Errorf("offset: %w", err)
	}
	if m.Inode, err = strconv.ParseUint(ino, 10, 64); err != nil {
		return m, fmt.Errorf("inode: %w", err)
	}
	if len(perms) != 4 {
		return m, fmt.Errorf("permissions %q", perms)
	}
	if m.End < m.Start {
		return m, fmt.Errorf("end %#x before start %#x", m.End, m.Start)
	}
	m.Perms, m.Dev = perms, dev
	m.Path = strings.TrimLeft(rest, " \t")
	return m, nil
}

// ReadMaps reads /proc/PID/maps.
func ReadMaps(pid int) ([]Mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read maps of %d: %w", pid, err)
	}
	defer f.Close()
	maps, err := ParseMaps(f)
	if err != nil {
		return nil, fmt.Errorf("read maps of %d: %w", pid, err)
	}
	return maps, nil
}

// MainPath returns the path of the executable of process pid, as the kernel
// names it (/proc/PID/exe), to tell the main executable among LoadedPaths.
func MainPath(pid int) (string, error) {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return "", fmt.Errorf("main executable of %d: %w", pid, err)
	}
	return p, nil
}

// LoadedPaths returns the distinct paths of the files with an executable
// mapping (the main executable, shared libraries, the dynamic loader), in
// order of first appearance, which puts the main executable first in a
// normally started process. [vdso] and other pseudo-files are left out: they
// are not files that can be opened. So are deleted files, whose path may now
// name another file (use /proc/PID/map_files for those).
func LoadedPaths(maps []Mapping) []string {
	var out []string
	seen := make(map[string]bool)
	for _, m := range maps {
		if !m.Exec() || !m.FileBacked() || m.Deleted() || seen[m.Path] {
			continue
		}
		seen[m.Path] = true
		out = append(out, m.Path)
	}
	return out
}
