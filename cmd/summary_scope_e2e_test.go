package cmd_test

import (
	"testing"
)

// summary's busy time (the default) on a threaded server's idle pool (testdata/src/
// pool.c), its times measured (--sample 0): wall time ranks the workers'
// pthread_cond_wait first; busy time takes it out, ranks the busy function
// (crunch) first, and still reports the blocked time, which is what busy
// time lost. Recorded as a user does, with sampled times, crunch leads
// too, and the waiting workers have next to no CPU time.
func TestSummaryBusyScopeOnAnIdlePool(t *testing.T) {
	dir := t.TempDir()
	recordWith(t, dir, "pool.data", []string{"--sample", "0"}, "pool")
	record(t, dir, "sampled.data", "pool")
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
