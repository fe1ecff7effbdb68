package attach

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/workload"
)

// TestExitPlansRebased: a function's exit probes are planned once per
// module and given to a process that maps it elsewhere with its tail
// jumps' targets moved there — the plan a fresh look at that address
// finds; text that is not its file's bytes (a call site re-aimed in it)
// is planned afresh and not kept. tailplt's sortall ends in a tail jump
// through the PLT.
func TestExitPlansRebased(t *testing.T) {
	mod := tailpltModule(t)
	i := slices.IndexFunc(mod.Symbols, func(s instrument.Symbol) bool { return s.Name == "sortall" })
	if i < 0 {
		t.Fatal("no sortall")
	}
	sym := mod.Symbols[i]
	file, err := mod.ReadAt(sym.Value, int(sym.Size)+padLen(mod, sym))
	if err != nil {
		t.Fatal(err)
	}
	pad := file[sym.Size:]
	e := &engine{}
	plan := func(bias uint64, code []byte) instrument.ExitPlan {
		t.Helper()
		l := &loaded{mod: mod, bias: bias}
		p, err := e.exitPlanOf(l, sym, code, pad, file, sym.Value+bias)
		if err != nil {
			t.Fatalf("bias %#x: %v", bias, err)
		}
		return p
	}
	first := plan(0x5500_0000_0000, file)
	if len(first.Tails) != 1 || first.Tails[0].To < 0x5500_0000_0000 || len(e.exitPlans[mod]) != 1 {
		t.Fatalf("first plan %+v (%d kept): want one tail jump into the module at its bias, kept", first, len(e.exitPlans[mod]))
	}
	kept := e.exitPlans[mod][sym.Value]
	second := plan(0x7f00_0000_0000, file)
	fresh, err := (&engine{}).exitPlanOf(&loaded{mod: mod, bias: 0x7f00_0000_0000}, sym, file, pad, file, sym.Value+0x7f00_0000_0000)
	if err != nil || second.Tails[0].To != fresh.Tails[0].To || second.Tails[0].To-first.Tails[0].To != 0x7f00_0000_0000-0x5500_0000_0000 ||
		len(second.Regions) != len(fresh.Regions) {
		t.Errorf("kept plan at another bias %+v, fresh %+v (%v); first %+v", second, fresh, err, first)
	}
	// The text differs from the file (a byte of its padding, say): not
	// the kept plan's to give, nor to replace.
	changed := append([]byte(nil), file...)
	changed[len(changed)-1] ^= 0xff
	plan(0x7f00_0000_0000, changed)
	if got := e.exitPlans[mod][sym.Value]; got.plan.Tails[0].To != kept.plan.Tails[0].To || len(e.exitPlans[mod]) != 1 {
		t.Errorf("kept plan changed by text not the file's: %+v, was %+v", got, kept)
	}
}

// TestPrePlanMatchesPlanAtPatch: the plans prePlan makes on two
// goroutines before an attach (link-time addresses) are each function's
// own plan, as patching it would make it at that address, for every
// function of tailplt.
func TestPrePlanMatchesPlanAtPatch(t *testing.T) {
	mod := tailpltModule(t)
	pre := &engine{}
	pre.prePlan(mod, 2, func(instrument.Symbol) bool { return true })
	planned := 0
	for _, sym := range mod.Symbols {
		if sym.Size == 0 {
			continue
		}
		got, ok := pre.exitPlans[mod][sym.Value]
		if !ok {
			t.Errorf("%s: not planned", sym.Name)
			continue
		}
		file, err := mod.ReadAt(sym.Value, int(sym.Size)+padLen(mod, sym))
		if err != nil {
			t.Fatal(err)
		}
		pad := file[sym.Size:]
		want, werr := (&engine{}).exitPlanOf(&loaded{mod: mod}, sym, file, pad, file, sym.Value)
		if (werr == nil) != (got.err == nil) || !slices.Equal(got.plan.Regions, want.Regions) || !slices.Equal(got.plan.Tails, want.Tails) {
			t.Errorf("%s: planned before %+v (%v), at patch %+v (%v)", sym.Name, got.plan, got.err, want, werr)
		}
		if werr == nil {
			planned++
		}
	}
	if planned < 3 {
		t.Errorf("%d functions with exit plans: not the workload this test wants", planned)
	}
}

// tailpltModule is the tailplt workload's module.
func tailpltModule(t *testing.T) *instrument.Module {
	t.Helper()
	bin, err := workload.Path("tailplt")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := instrument.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// A shell runs exec_target twice: two images of one file, mapped where
// each process's layout puts them, the second one's exit probes from the
// plans the first one's scan made (shared module): each counts the
// workload's calls exactly, under every probe kind.
func TestSameFileExecdTwice(t *testing.T) {
	target, err := workload.Path("exec_target")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range probeKinds {
		t.Run(kind, func(t *testing.T) {
			opt := defaultOptions(t)
			withKind(&opt, kind)
			var out bytes.Buffer
			r, err := recordTo(context.Background(), []string{"/bin/sh", "-c", target + "; " + target}, opt, &out)
			if err != nil {
				t.Fatal(err)
			}
			p := r.Profile
			images := 0
			for pi, pr := range p.Processes {
				if pr.Exe != target {
					continue
				}
				images++
				calls := map[string]int64{}
				for _, th := range p.Threads {
					if th.Process != pi {
						continue
					}
					for _, n := range th.Nodes {
						calls[p.FuncName(n.Func)] += n.Calls
					}
				}
				if calls["target_run"] != 1 || calls["target_rec"] != 10 || calls["target_leaf"] != 3 {
					t.Errorf("image %d (pid %d): target_run %d, target_rec %d, target_leaf %d calls, want 1, 10, 3",
						pi, pr.Pid, calls["target_run"], calls["target_rec"], calls["target_leaf"])
				}
			}
			if images != 2 {
				t.Errorf("%d images of %s, want 2 (output %q)", images, target, out.String())
			}
		})
	}
}
