package attach

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/workload"
)

// sweptPlans is what a module's sweep left: exit plans and entry branches
// by link-time address, errors as their text.
type sweptPlans struct {
	exits map[uint64]string // plan and error, printed
	swept map[uint64]string
}

// sweepOnce opens path afresh and sweeps it as a session's first process
// mapping it would, with the plan cache in dir ("" none), every function
// selected; it returns what the sweep left and how many exit plans the
// cache gave.
func sweepOnce(t *testing.T, path, dir string) (sweptPlans, int) {
	t.Helper()
	mod, err := instrument.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := instrument.NewFilter([]string{"."}, nil, []string{filepath.Base(path)})
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{opt: Options{Filter: f, PlanCache: dir}}
	e.exitProbes = true
	e.sweep(mod, path, true)
	out := sweptPlans{map[uint64]string{}, map[uint64]string{}}
	for at, p := range e.exitPlans[mod] {
		out.exits[at] = sprintPlan(p)
	}
	mod.EachSwept(func(at uint64, b []instrument.EntryBranch, err error) {
		out.swept[at] = fmt.Sprint(b, err)
	})
	return out, e.stats.PlansCached
}

func sprintPlan(p plannedExits) string { return fmt.Sprint(p.plan.Regions, p.plan.Tails, p.err) }

// TestPlanCacheGivesTheSamePlans: a session whose modules' plans come
// from the plan cache has exactly the plans a fresh walk of every
// function makes (tailplt: tail jumps through the PLT; the C library:
// thousands of functions, some refused), and a damaged cache file is a
// miss, planned afresh and written again.
func TestPlanCacheGivesTheSamePlans(t *testing.T) {
	tailplt, err := workload.Path("tailplt")
	if err != nil {
		t.Fatal(err)
	}
	libc := ""
	for _, p := range []string{"/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6"} {
		if _, err := os.Stat(p); err == nil {
			libc = p
			break
		}
	}
	if libc == "" {
		t.Fatal("no C library found")
	}
	dir := t.TempDir()
	for _, path := range []string{tailplt, libc} {
		fresh, n := sweepOnce(t, path, "")
		if n != 0 || len(fresh.exits) < 3 {
			t.Fatalf("%s: %d exit plans, %d from a cache: not the module this test wants", path, len(fresh.exits), n)
		}
		refused := 0
		for _, s := range fresh.exits {
			if s[len(s)-5:] != "<nil>" {
				refused++
			}
		}
		if path == libc && refused == 0 {
			t.Errorf("%s: no function refused an exit plan: the errors are not tested", path)
		}
		first, n := sweepOnce(t, path, dir)
		if n != 0 || !maps.Equal(first.exits, fresh.exits) || !maps.Equal(first.swept, fresh.swept) {
			t.Fatalf("%s: first session with an empty cache: %d from it, plans equal %v, branches equal %v",
				path, n, maps.Equal(first.exits, fresh.exits), maps.Equal(first.swept, fresh.swept))
		}
		second, n := sweepOnce(t, path, dir)
		if n != len(fresh.exits) {
			t.Errorf("%s: %d exit plans from the cache, want all %d", path, n, len(fresh.exits))
		}
		for at, want := range fresh.exits {
			if got := second.exits[at]; got != want {
				t.Errorf("%s %#x: exit plan from the cache %s, fresh %s", path, at, got, want)
			}
		}
		if !maps.Equal(second.swept, fresh.swept) {
			t.Errorf("%s: entry branches from the cache differ from a fresh sweep's", path)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.plans"))
	if len(files) != 2 {
		t.Fatalf("cache files %v, want one for each module", files)
	}
	// Damage every file: each is a miss, planned afresh and written again.
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-1] ^= 0xff
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{tailplt, libc} {
		fresh, _ := sweepOnce(t, path, "")
		if got, n := sweepOnce(t, path, dir); n != 0 || !maps.Equal(got.exits, fresh.exits) {
			t.Errorf("%s: a damaged cache file gave %d plans (equal to fresh: %v)", path, n, maps.Equal(got.exits, fresh.exits))
		}
		if _, n := sweepOnce(t, path, dir); n != len(fresh.exits) {
			t.Errorf("%s: after a damaged file, the rewritten one gave %d plans, want %d", path, n, len(fresh.exits))
		}
	}
	after, _ := filepath.Glob(filepath.Join(dir, "*.plans"))
	if !slices.Equal(after, files) {
		t.Errorf("cache files after the damage %v, want %v", after, files)
	}
}
