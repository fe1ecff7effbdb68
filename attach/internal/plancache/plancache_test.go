package plancache

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/instrument"
)

func TestKeyDependsOnEverything(t *testing.T) {
	base := func() (string, string, string) { return "tool", "file bytes", "symbols" }
	key := func(tool, file, syms string) string {
		k, err := Key(tool, strings.NewReader(file), []byte(syms))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key(base())
	if k0 != key(base()) {
		t.Fatal("the same inputs give two keys")
	}
	for _, c := range []struct {
		name             string
		tool, file, syms string
	}{
		{"another build", "tool2", "file bytes", "symbols"},
		{"another file", "tool", "file bytes!", "symbols"},
		{"other symbols", "tool", "file bytes", "symbols2"},
		{"bytes moved between file and symbols", "tool", "file byte", "ssymbols"},
		{"bytes moved between tool and file", "too", "lfile bytes", "symbols"},
	} {
		if key(c.tool, c.file, c.syms) == k0 {
			t.Errorf("%s: same key", c.name)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	plans := Plans{
		0x1000: {Exits: &Exits{Plan: instrument.ExitPlan{
			Regions: []instrument.ExitRegion{{Off: 10, Len: 5, Ret: 14}},
			Tails:   []instrument.TailSite{{Off: 20, Len: 5, To: 0x2000, Ends: true}},
		}}},
		0x2000: {Exits: &Exits{Err: "an indirect jump at +0x4"}, Swept: &Swept{Err: "undecodable bytes at +0x9"}},
		0x3000: {Swept: &Swept{Branches: []instrument.EntryBranch{{From: 40, To: 3}}}},
	}
	if err := Save(dir, "k1", plans); err != nil {
		t.Fatal(err)
	}
	if got := Load(dir, "k1"); !reflect.DeepEqual(got, plans) {
		t.Errorf("loaded %+v, want %+v", got, plans)
	}
	if got := Load(dir, "k2"); got != nil {
		t.Errorf("another key loaded %+v", got)
	}
	// A file under another name than its key is a miss, and removed.
	data, err := os.ReadFile(path(dir, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path(dir, "k3"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Load(dir, "k3"); got != nil {
		t.Errorf("a file renamed loaded %+v", got)
	}
	if _, err := os.Stat(path(dir, "k3")); !os.IsNotExist(err) {
		t.Errorf("a file under another key stays: %v", err)
	}
	for _, damage := range []struct {
		name string
		f    func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"a byte changed", func(b []byte) []byte { b[len(b)-3] ^= 1; return b }},
		{"another format", func(b []byte) []byte { return append([]byte("profile-plans/0\n"), b[len(magic):]...) }},
		{"empty", func([]byte) []byte { return nil }},
	} {
		if err := os.WriteFile(path(dir, "k1"), damage.f(append([]byte(nil), data...)), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := Load(dir, "k1"); got != nil {
			t.Errorf("%s: loaded %+v", damage.name, got)
		}
	}
}

// TestPrune: past the budget, the files used least recently go first;
// a temporary file left an hour ago goes, a fresh one stays.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	for i, name := range []string{"a.plans", "b.plans", "c.plans", ".tmp-1", ".tmp-2", "other"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, 100), 0o600); err != nil {
			t.Fatal(err)
		}
		at := old.Add(time.Duration(i) * time.Minute)
		if name == ".tmp-2" {
			at = time.Now()
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	prune(dir, 250)
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{".tmp-2", "b.plans", "c.plans", "other"}; !reflect.DeepEqual(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

func TestToolID(t *testing.T) {
	id, err := ToolID()
	if err != nil || len(id) < 16 {
		t.Fatalf("ToolID = %q, %v", id, err)
	}
}
