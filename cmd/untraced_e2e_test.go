package cmd_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
)

// TestUntracedLibraryNamed: inlib does all its work in libspin.so, which
// the default selection does not trace: its time shows as run's self
// time, and the record says (on stderr and in the profile's warnings)
// which library the samples ran in and the flag that traces it. With that
// flag there is no such warning, and the library's calls are counted
// exactly: spin 40 times, spin_mix 80,000,000.
func TestUntracedLibraryNamed(t *testing.T) {
	dir := t.TempDir()
	const hint = "ran in libspin.so, no function of which is traced (their time is their traced callers' self time): --lib libspin.so traces it"
	_, stderr, code := run(t, dir, "record", "-o", "a.data", "--", wl(t, "inlib"))
	if code != 0 || !strings.Contains(stderr, hint) {
		t.Fatalf("record: exit %d, stderr %q: want the hint %q", code, stderr, hint)
	}
	p, err := model.ReadFile(filepath.Join(dir, "a.data"))
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(p, hint) {
		t.Errorf("profile warnings %q: want the hint", p.Meta.Warnings)
	}
	_, stderr, code = run(t, dir, "record", "--lib", "libspin.so", "-o", "b.data", "--", wl(t, "inlib"))
	if code != 0 || strings.Contains(stderr, "no function of which is traced") {
		t.Fatalf("record --lib libspin.so: exit %d, stderr %q", code, stderr)
	}
	p, err = model.ReadFile(filepath.Join(dir, "b.data"))
	if err != nil {
		t.Fatal(err)
	}
	calls := functionCalls(p)
	if calls["libspin.so:spin"] != 40 || calls["libspin.so:spin_mix"] != 80_000_000 {
		t.Errorf("calls: spin %d, spin_mix %d; want 40 and 80000000", calls["libspin.so:spin"], calls["libspin.so:spin_mix"])
	}
}

func hasWarning(p *model.Profile, s string) bool {
	for _, w := range p.Meta.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}
