package cmd_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// summary's busy time (the default) on a threaded server's idle pool (testdata/src/
// pool.c), its times measured (--sample 0): wall time ranks the workers'
// pthread_cond_wait first; busy time takes it out, ranks the busy function
// (crunch) first, and still reports the blocked time, which is what busy
// time lost. Recorded as a user does, with sampled times, crunch leads
// too, and the waiting workers have next to no CPU time: crunch has over
// 90% of it on a run of 120 rounds (some 300 ms of crunch beside the
// start-up's and the thread creations' 5-10 ms, traced; 40 rounds left
// that share at 89-93%).
func TestSummaryBusyScopeOnAnIdlePool(t *testing.T) {
	dir := t.TempDir()
	recordWith(t, dir, "pool.data", []string{"--sample", "0"}, "pool")
	record(t, dir, "sampled.data", "pool", "--rounds", "120")
	type fn struct {
		Name    string  `json:"name"`
		Calls   int64   `json:"calls"`
		SelfNs  int64   `json:"self_ns"`
		SelfPct float64 `json:"self_pct"`
	}
	type doc struct {
		Totals struct {
			TracedNs  int64  `json:"traced_ns"`
			BlockedNs int64  `json:"blocked_ns"`
			Times     string `json:"times"`
		} `json:"totals"`
		Functions []fn `json:"functions"`
	}
	var wall, busy doc
	var byDefault, sampled doc
	decodeSummary(t, dir, &wall, "pool.data", "--scope", "wall")
	decodeSummary(t, dir, &busy, "pool.data", "--scope", "busy")
	decodeSummary(t, dir, &byDefault, "pool.data")
	if byDefault.Totals.Times != "busy" || byDefault.Functions[0].Name != "crunch" {
		t.Errorf("by default: times %q, hottest %s; want busy time, crunch first", byDefault.Totals.Times, byDefault.Functions[0].Name)
	}
	decodeSummary(t, dir, &sampled, "sampled.data")
	if sampled.Functions[0].Name != "crunch" || sampled.Functions[0].SelfPct < 90 {
		t.Errorf("sampled: hottest %+v, want crunch with over 90%% of the CPU time", sampled.Functions[0])
	}
	find := func(d doc, name string) fn {
		for _, f := range d.Functions {
			if f.Name == name {
				return f
			}
		}
		t.Fatalf("no %s in the summary", name)
		return fn{}
	}
	if wall.Totals.Times != "wall" || busy.Totals.Times != "busy" {
		t.Fatalf("times %q and %q", wall.Totals.Times, busy.Totals.Times)
	}
	if wall.Functions[0].Name != "pthread_cond_wait" {
		t.Errorf("wall: hottest %s, want pthread_cond_wait", wall.Functions[0].Name)
	}
	if busy.Functions[0].Name != "crunch" {
		t.Errorf("busy: hottest %s, want crunch", busy.Functions[0].Name)
	}
	if w := find(busy, "pthread_cond_wait"); w.SelfNs != 0 || w.Calls != find(wall, "pthread_cond_wait").Calls {
		t.Errorf("busy: pthread_cond_wait %+v: want its calls and no time", w)
	}
	if busy.Totals.BlockedNs != wall.Totals.BlockedNs || busy.Totals.TracedNs != wall.Totals.TracedNs-wall.Totals.BlockedNs {
		t.Errorf("busy traced %d, blocked %d; wall traced %d, blocked %d", busy.Totals.TracedNs, busy.Totals.BlockedNs,
			wall.Totals.TracedNs, wall.Totals.BlockedNs)
	}
	cw, cb := find(wall, "crunch"), find(busy, "crunch")
	if cb.SelfNs != cw.SelfNs || cb.SelfPct <= cw.SelfPct || cb.SelfPct < 50 {
		t.Errorf("crunch: busy %+v, wall %+v", cb, cw)
	}
	_, stderr, code := run(t, dir, "summary", "pool.data", "--scope", "idle")
	oneLineError(t, stderr, code, "bad --scope")
	if code != 2 {
		t.Errorf("bad --scope: exit %d, want 2", code)
	}
}

// A waiting call's wall time splits into the CPU time sampled inside it
// and the time it was blocked (testdata/src/syscpu.c): slurp's reads of
// /dev/urandom are on a CPU all along, doze's usleep off one. The CPU
// time inside waiting calls is the kernel's own account of the reads'
// system time (the workload prints it, from getrusage; tick-based on some
// kernels) within 40% (none of it, as user-mode samples would see, is far
// out), and the blocked time at least the sleeps'. Sampled in user mode only
// (perf_event_paranoid 2 without root), there is no split.
func TestWaitingCallsOnCPU(t *testing.T) {
	dir := t.TempDir()
	const rounds = 40
	out, stderr, code := run(t, dir, "record", "-o", "s.data", "--", wl(t, "syscpu"), strconv.Itoa(rounds))
	if code != 0 {
		t.Fatalf("record syscpu: exit %d\n%s", code, stderr)
	}
	var readUs int64
	if _, err := fmt.Sscanf(out, "syscpu: 40 rounds, read system time %d us", &readUs); err != nil {
		t.Fatalf("syscpu said %q: %v", out, err)
	}
	var doc struct {
		Meta struct {
			CPUSamples *struct {
				WithKernel bool `json:"with_kernel"`
			} `json:"cpu_samples"`
		} `json:"meta"`
		Totals struct {
			BlockedNs    int64 `json:"blocked_ns"`
			WaitingCPUNs int64 `json:"waiting_cpu_ns"`
			WaitingCPU   bool  `json:"waiting_cpu_sampled"`
		} `json:"totals"`
	}
	decodeSummary(t, dir, &doc, "s.data")
	if doc.Meta.CPUSamples == nil {
		t.Fatal("no CPU samples in a default recording")
	}
	tt := doc.Totals
	if !doc.Meta.CPUSamples.WithKernel {
		if tt.WaitingCPU || tt.WaitingCPUNs != 0 {
			t.Errorf("sampled in user mode only, yet waiting calls split: %+v", tt)
		}
		return
	}
	want := readUs * 1000
	if !tt.WaitingCPU || tt.WaitingCPUNs < want*6/10 || tt.WaitingCPUNs > want*14/10 {
		t.Errorf("on a CPU in waiting calls %v (split %v), the kernel says the reads took %v", time.Duration(tt.WaitingCPUNs), tt.WaitingCPU, time.Duration(want))
	}
	if sleeps := int64(rounds * 5 * time.Millisecond); tt.BlockedNs < sleeps {
		t.Errorf("blocked %v, less than the sleeps' %v", time.Duration(tt.BlockedNs), time.Duration(sleeps))
	}
}
