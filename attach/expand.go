package attach

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/model"
)

// expanding is auto-expand's state: its tick, and the functions it took.
type expanding struct {
	expandDue atomic.Bool
	expanded  map[int]bool
}

// Expansion is one function auto-expand took (Options.Expand.Report): at AtNs
// (the session's clock) it had the most busy self time not yet looked
// into; its callees were discovered in its code and those not traced yet
// are traced from then on.
type Expansion struct {
	AtNs   int64
	Func   string // as the profile names it
	SelfNs int64  // its busy self time so far, all threads
	// Added are the callees traced from AtNs, as the profile names them;
	// Unprobed (module:name) those found that could not be given a probe
	// (not in a loaded module, say); Traced counts those already traced.
	// Err says why none could be found.
	Added    []string
	Unprobed []string
	Traced   int
	Err      error
}

// expandLoop asks the tracer for an auto-expand step every
// Options.ExpandEvery until stop is closed.
func (e *engine) expandLoop(stop <-chan struct{}) {
	tick := time.NewTicker(e.opt.Expand.Every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			e.expandDue.Store(true)
			e.wake()
		}
	}
}

// autoExpand takes the Options.Expand.Top functions with the most busy self
// time so far that were not expanded yet, discovers their callees
// (Options.ExpandDepth levels) and traces those not traced yet, every thread
// stopped meanwhile (the discovery loop of docs/discover.md: the time a
// function spends in code no probe sees shows as its self time).
func (e *engine) autoExpand() {
	if e.detaching || len(e.threads) == 0 {
		return
	}
	if e.clock != nil {
		e.drainAll()
	}
	snap := e.profileNow()
	top := snap.Busy().HottestSelf(e.opt.Expand.Top, func(fn int) bool { return e.expanded[fn] })
	if len(top) == 0 {
		return
	}
	traced := e.tracedKeys()
	discoverers := map[int]*instrument.Discoverer{}
	steps := make([]Expansion, len(top))
	found := make([][]string, len(top)) // each function's new callees, by key
	keys := map[string]bool{}
	for i, h := range top {
		steps[i] = Expansion{Func: snap.FuncName(h.Func), SelfNs: h.SelfNs}
		found[i], steps[i].Traced, steps[i].Err = e.discoverCallees(snap, h.Func, discoverers, traced)
		for _, k := range found[i] {
			keys[k] = true
		}
	}
	var probed map[string]int
	now := e.now()
	if len(keys) > 0 {
		var ok bool
		if probed, now, ok = e.traceKeys(keys); !ok {
			return // a vfork in progress: the next tick tries again
		}
	}
	e.stats.Expand.Added += len(probed) // a callee two functions share counts once
	prof := e.s.Profile()
	for i, h := range top {
		e.expanded[h.Func] = true
		e.stats.Expand.Taken++
		x := &steps[i]
		x.AtNs = now
		for _, k := range found[i] {
			if fn, ok := probed[k]; ok {
				if prof.Functions[fn].TracedSinceNs == 0 {
					prof.Functions[fn].TracedSinceNs = now
				}
				x.Added = append(x.Added, prof.FuncName(fn))
			} else {
				x.Unprobed = append(x.Unprobed, k)
			}
		}
		if len(x.Added) > 0 {
			prof.Meta.Filters = append(prof.Meta.Filters, fmt.Sprintf("--auto-expand at %s: %s: %s",
				model.FormatOffset(now), x.Func, strings.Join(x.Added, ", ")))
		}
		if e.opt.Expand.Report != nil {
			e.opt.Expand.Report(*x)
		}
	}
}

// discoverCallees finds the callees of function fn of snap, in the code
// of a process that has its module loaded, to Options.ExpandDepth
// levels. It returns the keys (module:name) of those not traced yet and
// how many are traced already.
func (e *engine) discoverCallees(snap *model.Profile, fn int, ds map[int]*instrument.Discoverer, traced map[string]bool) ([]string, int, error) {
	f := snap.Functions[fn]
	path := snap.Modules[f.Module].Path
	pid := e.pidWith(path)
	if pid == 0 {
		return nil, 0, fmt.Errorf("no traced process has %s loaded", filepath.Base(path))
	}
	d, ok := ds[pid]
	if !ok {
		var err error
		if d, err = instrument.NewPidDiscoverer(pid, e.opt.Debug); err != nil {
			return nil, 0, err
		}
		ds[pid] = d
	}
	disc, err := d.Discover(model.FuncKey(path, f.Name), max(e.opt.Expand.Depth, 1))
	if err != nil {
		return nil, 0, err
	}
	var added []string
	known := 0
	for _, r := range disc.Functions() {
		if disc.Root.Func != nil && r.Key() == disc.Root.Func.Key() {
			continue
		}
		if traced[r.Key()] {
			known++
			continue
		}
		added = append(added, r.Key())
	}
	return added, known, nil
}

// tracedKeys are the module:name keys of the functions with a probe.
func (e *engine) tracedKeys() map[string]bool {
	prof := e.s.Profile()
	out := map[string]bool{}
	for _, f := range prof.Functions {
		// A counted function is traced: its calls are exact from the
		// start. Taken for untraced, it was probed again (its probe kept,
		// its note and probe counts overwritten) and said traced only
		// from then on (TestAutoExpandKeepsCounted).
		if f.Probe == model.ProbeInline || f.Probe == model.ProbeTrap || f.Probe == model.ProbeCounted {
			out[model.FuncKey(prof.Modules[f.Module].Path, f.Name)] = true
		}
	}
	return out
}

// pidWith returns a traced process that has the file at path loaded as a
// module, 0 if none.
func (e *engine) pidWith(path string) int {
	for _, t := range e.threads {
		for _, l := range t.proc.as.modules {
			if l.mod.Path == path {
				return t.proc.pid
			}
		}
	}
	return 0
}

// traceKeys traces the functions keys name (module:name) from now on in
// every traced process, and in the images exec starts later (the filter
// selects them). Every thread is stopped while code changes. It returns
// each probed function by key and the time the threads were let go, from
// which on the probes see every call; false when the threads could not
// all be stopped now.
func (e *engine) traceKeys(keys map[string]bool) (map[string]int, int64, bool) {
	list := slices.Sorted(maps.Keys(keys))
	filter, err := e.opt.Filter.WithFunctions(list)
	if err != nil {
		e.warn("auto-expand: %v", err)
		return nil, e.now(), true
	}
	from, ok := e.pauseAll()
	if !ok {
		return nil, 0, false
	}
	e.opt.Filter = filter
	mods := map[string]bool{} // the modules the keys name, by base name
	for k := range keys {
		mod, _, _ := strings.Cut(k, ":")
		mods[mod] = true
	}
	selected := func(path string, isMain bool, name string) bool {
		return keys[model.FuncKey(path, name)] && filter.Function(path, isMain, name)
	}
	probed := map[string]int{}
	done := map[*space]bool{}
	for _, t := range e.threads {
		as := t.proc.as
		if done[as] || !t.stopped {
			continue
		}
		done[as] = true
		for k, fn := range e.addFunctions(t.tid, t.proc, mods, selected) {
			probed[k] = fn
		}
	}
	at := e.now()
	e.resumeAll(from)
	return probed, at, true
}

// addFunctions gives the functions selected chooses in the modules
// process p has loaded a probe, every thread of its space stopped (tid
// is one): in the modules mods names (by base name) only, traced already
// or not so far; no other file is read while the threads wait.
func (e *engine) addFunctions(tid int, p *process, mods map[string]bool, selected func(path string, isMain bool, name string) bool) map[string]int {
	mapped, err := instrument.ReadMaps(p.pid)
	if err != nil {
		return nil
	}
	as := p.as
	var rips []uint64
	if as.inl != nil {
		rips = e.threadRips(as)
		e.noteResumes(as)
		defer func() { as.resumes = nil }()
	}
	as.anon = nil
	defer func() { as.anon = nil }()
	out := map[string]int{}
	for _, path := range instrument.LoadedPaths(mapped) {
		if !mods[filepath.Base(path)] {
			continue
		}
		var l *loaded
		for _, m := range as.modules {
			if m.mod.Path == path {
				l = m
			}
		}
		if l == nil {
			if !as.paths[path] {
				continue // not looked at yet: the next scan sees it
			}
			l = e.moduleFor(as, mapped, path, selected)
			if l == nil {
				continue
			}
		}
		for _, sym := range l.mod.Symbols {
			if !selected(path, l.main, sym.Name) || as.probedAt(sym.Value+l.bias) {
				continue
			}
			if fn, ok := e.probeSymbol(tid, as, l, sym, rips, selected); ok {
				out[model.FuncKey(path, sym.Name)] = fn
			}
		}
	}
	return out
}

// probedAt tells whether the function at addr has a probe in the space
// already (an inline patch, at its entry or its call sites, or a
// breakpoint): probeSymbol would keep it and say it probed it anew.
func (s *space) probedAt(addr uint64) bool {
	if s.inl != nil {
		if _, ok := s.inl.Patches[addr]; ok {
			return true
		}
	}
	_, ok := s.bps[addr]
	return ok
}

// moduleFor opens a loaded module that no function was traced in so far
// when selected chooses one of its functions, and records it.
func (e *engine) moduleFor(as *space, mapped []instrument.Mapping, path string, selected func(string, bool, string) bool) *loaded {
	mod, err := instrument.OpenWith(path, e.debugSearch())
	if err != nil {
		return nil
	}
	want := false
	for _, sym := range mod.Symbols {
		if selected(path, false, sym.Name) {
			want = true
			break
		}
	}
	if !want {
		return nil
	}
	bias, err := mod.Bias(mapped)
	if err != nil {
		return nil
	}
	return e.addModule(as, mapped, mod, bias, false)
}
