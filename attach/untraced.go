package attach

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/profile-dev/profile/instrument"
)

// Where the CPU samples fall in code of a library no function of which is
// traced: a program whose work is in a library it links (python's in
// libpython, xz's in liblzma) shows its time as its traced callers' self
// time (main's, often all of it). perf names the library's functions; the
// profile says which library and the flag that traces it.

// untracedHint names a library when at least untracedShare of the
// samples taken in user code ran in it, of at least untracedMinSamples.
const (
	untracedShare      = 0.2
	untracedMinSamples = 100
)

// codeRange is an executable mapping of a module.
type codeRange struct {
	lo, hi uint64
	path   string
}

// untracedCode lists the executable mappings of maps whose module the
// scan does not select (no function of it is traced), by address.
func (e *engine) untracedCode(maps []instrument.Mapping, exe string) []codeRange {
	var out []codeRange
	for _, m := range maps {
		if !m.Exec() || !strings.HasPrefix(m.Path, "/") {
			continue
		}
		if _, _, selected := e.selects(m.Path, exe); !selected {
			out = append(out, codeRange{m.Start, m.End, m.Path})
		}
	}
	slices.SortFunc(out, func(a, b codeRange) int { return cmp.Compare(a.lo, b.lo) })
	return out
}

// untracedPath is the module of as holding ip when it is one whose
// functions are not traced, "" otherwise.
func (as *space) untracedPath(ip uint64) string {
	i, _ := slices.BinarySearchFunc(as.untraced, ip, func(r codeRange, ip uint64) int {
		if r.hi <= ip {
			return -1
		}
		if r.lo > ip {
			return 1
		}
		return 0
	})
	if i < len(as.untraced) && as.untraced[i].lo <= ip && ip < as.untraced[i].hi {
		return as.untraced[i].path
	}
	return ""
}

// noteUserSample counts a sample taken in user code at ip, and by module
// one that ran in a library whose functions are not traced.
func (e *engine) noteUserSample(as *space, ip uint64) {
	e.userSamples++
	if p := as.untracedPath(ip); p != "" {
		if e.untracedSamples == nil {
			e.untracedSamples = map[string]int64{}
		}
		e.untracedSamples[p]++
	}
}

// untracedHint names the library where most of the samples in user code
// ran untraced, with the flag that traces it, or "" when none holds
// untracedShare of them.
func (e *engine) untracedHint() string {
	if e.userSamples < untracedMinSamples {
		return ""
	}
	best, most := "", int64(0)
	for p, n := range e.untracedSamples {
		if n > most || n == most && p < best {
			best, most = p, n
		}
	}
	if float64(most) < untracedShare*float64(e.userSamples) {
		return ""
	}
	lib := filepath.Base(best)
	return fmt.Sprintf("%.0f%% of the CPU samples in user code ran in %s, no function of which is traced (their time is their traced callers' self time): --lib %s traces it",
		100*float64(most)/float64(e.userSamples), lib, lib)
}
