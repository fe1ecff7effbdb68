// Package plancache keeps, on disk, what planning a module's probes found
// by reading every instruction of its functions: each function's exit
// probe plan and the branches into its first bytes (instrument.PlanExits,
// instrument.EntryBranches). Read from the file's bytes alone, they are
// the same in every session that traces the same file with the same
// symbols and the same build of profile; for a large program they take
// most of a session's start (gcc's cc1: 1.2–1.5 s of a 2.5–3.2 s
// recorded compile).
//
// A cache file is named by its key, a hash of everything the plans depend
// on (Key). It holds a magic line, a SHA-256 of its body and the body
// (gob): a file that is short, damaged or of another format is a miss,
// never an error the session sees. Files go in whole (a temporary file
// renamed), so concurrent sessions at worst both write the same one.
package plancache

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/profile-dev/profile/instrument"
)

// magic begins every cache file; a change of Entry's meaning changes it.
const magic = "profile-plans/1\n"

// staleTemp: a temporary file this old is a killed session's.
const staleTemp = time.Hour

// Budget is how many bytes the cache directory may hold: Save removes
// the files used least recently beyond it.
const Budget = 256 << 20

// Exits is one function's exit probe plan at link-time addresses, or the
// reason it has none.
type Exits struct {
	Plan instrument.ExitPlan
	Err  string // "" planned
}

// Swept is one function's branches into its first bytes, or why the
// sweep could not vouch for it.
type Swept struct {
	Branches []instrument.EntryBranch
	Err      string
}

// Entry is what is kept of the function at a link-time address.
type Entry struct {
	Exits *Exits // nil: not planned
	Swept *Swept // nil: not swept
}

// Plans are a module's entries by link-time address.
type Plans map[uint64]Entry

// body is a cache file's content after its header.
type body struct {
	Key     string
	Entries []keyed
}

type keyed struct {
	At uint64
	Entry
}

// Key is the name of the cache file of a module: a hash of the build of
// profile (tool), of the module's file and of its symbols (symbols, in
// whatever form covers their names, addresses and sizes and where they
// came from).
func Key(tool string, file io.Reader, symbols []byte) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s%d:%s", magic, len(tool), tool)
	fh := sha256.New()
	if _, err := io.Copy(fh, file); err != nil {
		return "", fmt.Errorf("plan cache: %w", err)
	}
	h.Write(fh.Sum(nil))
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(symbols))))
	h.Write(symbols)
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// path is the file of key in dir.
func path(dir, key string) string { return filepath.Join(dir, key+".plans") }

// Load reads the plans of key from dir; a missing or unreadable file is
// nil (a miss). A file found is touched: Save's pruning keeps the ones
// used lately.
func Load(dir, key string) Plans {
	p := path(dir, key)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	b, err := decode(data)
	if err != nil || b.Key != key {
		os.Remove(p) // damaged: planned afresh and written again
		return nil
	}
	now := time.Now()
	os.Chtimes(p, now, now)
	out := make(Plans, len(b.Entries))
	for _, e := range b.Entries {
		out[e.At] = e.Entry
	}
	return out
}

// decode checks a file's header and sum and decodes its body.
func decode(data []byte) (body, error) {
	var b body
	rest, ok := bytes.CutPrefix(data, []byte(magic))
	if !ok || len(rest) < sha256.Size {
		return b, errors.New("not a plan cache file of this format")
	}
	sum, payload := rest[:sha256.Size], rest[sha256.Size:]
	if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
		return b, errors.New("damaged")
	}
	err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&b)
	return b, err
}

// Save writes plans as the file of key in dir (made if need be), then
// removes the files used least recently while the directory holds more
// than Budget bytes.
func Save(dir, key string, plans Plans) error {
	b := body{Key: key, Entries: make([]keyed, 0, len(plans))}
	for at, e := range plans {
		b.Entries = append(b.Entries, keyed{at, e})
	}
	slices.SortFunc(b.Entries, func(x, y keyed) int { return cmp.Compare(x.At, y.At) })
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(b); err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	sum := sha256.Sum256(payload.Bytes())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	_, err = f.Write(append(append([]byte(magic), sum[:]...), payload.Bytes()...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path(dir, key))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("plan cache: %w", err)
	}
	prune(dir, Budget)
	return nil
}

// prune removes the cache files of dir used least recently (by
// modification time, which Load touches) until they hold budget bytes at
// most, and temporary files a killed session left.
func prune(dir string, budget int64) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		used int64
	}
	var files []file
	var total int64
	for _, de := range ents {
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if strings.HasPrefix(de.Name(), ".tmp-") {
			if time.Now().Sub(info.ModTime()) > staleTemp {
				os.Remove(filepath.Join(dir, de.Name()))
			}
			continue
		}
		if !strings.HasSuffix(de.Name(), ".plans") {
			continue
		}
		files = append(files, file{de.Name(), info.Size(), info.ModTime().UnixNano()})
		total += info.Size()
	}
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(cmp.Compare(a.used, b.used), strings.Compare(a.name, b.name))
	})
	for _, f := range files {
		if total <= budget {
			return
		}
		if os.Remove(filepath.Join(dir, f.name)) == nil {
			total -= f.size
		}
	}
}
