package attach

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/profile-dev/profile/model"
)

// TestCalibrateMeasuresEachProbeKind: the kinds asked for and only them;
// an inline call costs less than a trap's two stops.
func TestCalibrateMeasuresEachProbeKind(t *testing.T) {
	cal, err := Calibrate(context.Background(), ProbesInline, ProbesTrap)
	if err != nil {
		t.Fatal(err)
	}
	in, trap := cal.Inline, cal.Trap
	if in.InNs <= 0 || in.OutNs <= 0 || trap.InNs <= 0 || trap.OutNs <= 0 || cal.Host == "" {
		t.Fatalf("calibration %+v: every cost measured, on a named host", cal)
	}
	if in.InNs+in.OutNs >= trap.InNs+trap.OutNs {
		t.Fatalf("an inline call (%+v) costs no less than a trap call (%+v)", in, trap)
	}
	cal, err = Calibrate(context.Background(), ProbesInline)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Inline.InNs <= 0 || cal.Trap != (model.ProbeCost{}) {
		t.Fatalf("inline asked for: calibration %+v, want inline only", cal)
	}
}

type times struct{ self, total int64 }

// funcTimes sums a function's self and total times over its nodes.
func funcTimes(p *model.Profile, name string) times {
	var s times
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			if p.FuncName(n.Func) == name {
				s.self += n.SelfNs
				s.total += n.TotalNs
			}
		}
	}
	return s
}

func TestCalibWriter(t *testing.T) {
	for _, c := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"profile-calib-4242-1234567", 4242, true},
		{"profile-calib-1234567", 0, false}, // an older version's: no writer
		{"profile-calib-x-1", 0, false},
		{"profile-calib-0-1", 0, false},
		{"other-4242-1", 0, false},
	} {
		if pid, ok := calibWriter(c.name); pid != c.pid || ok != c.ok {
			t.Errorf("calibWriter(%q) = %d, %v; want %d, %v", c.name, pid, ok, c.pid, c.ok)
		}
	}
}

// A killed profiler's calibration program goes at the next calibration;
// a running profiler's, and a file not named by a writer, stay.
func TestRemoveStaleCalibPrograms(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("%s/%s%d-1", dir, calibPrefix, gone.Process.Pid)
	live := fmt.Sprintf("%s/%s%d-2", dir, calibPrefix, os.Getppid())
	other := dir + "/" + calibPrefix + "123"
	for _, p := range []string{stale, live, other} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removeStale(dir)
	for p, want := range map[string]bool{stale: false, live: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", p, err == nil, want)
		}
	}
}
