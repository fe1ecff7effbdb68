package attach

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/attach/internal/trap"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/instrument/unwind"
	"github.com/profile-dev/profile/model"
)

// scanning is the scans' state: what the filters' --lib names selected,
// the modules preopen opened before the attach stopped the process (for
// its first scan), the call-frame information of the modules unwindAt it
// loaded, and what keeps a killed profiler's areas mapped.
type scanning struct {
	libsSeen map[string]bool
	opened   map[string]*instrument.Module
	shared   map[string]*instrument.Module // opened for an earlier process of the session
	// debugNet: debuginfod may be asked now (debugSearch); rootScanned:
	// the launched program's first image has been.
	debugNet, rootScanned bool
	localDebug            *instrument.DebugSearch // opt.Debug without debuginfod
	unwindPre             []*unwind.Module
	unwindAt              []string
	cfi                   cfiCache // call-frame information by file (loadUnwind)
	exitPlans             exitPlans
	planCaching           planCaching
	// picks: the filter's verdict on each symbol of a module (as a main
	// program or a library), the same for every process mapping it: a
	// shell script's commands each map the C library, and its thousands
	// of symbols went through the patterns again each time.
	picks map[pickKey]map[string]bool
	// symbolLists: lists of a module's symbols (symbolsWhere).
	symbolLists map[symbolList][]instrument.Symbol
}

type pickKey struct {
	filter *instrument.Filter // --auto-expand replaces it
	mod    *instrument.Module
	isMain bool
}

// picker is the filter's choice of mod's functions, cached per module;
// chosen lists the ifunc implementations this process resolved (a
// function selected by one of them is selected).
func (e *engine) picker(mod *instrument.Module, isMain bool, chosen map[string][]string) func(path string, isMain bool, name string) bool {
	if e.picks == nil {
		e.picks = map[pickKey]map[string]bool{}
	}
	f := e.opt.Filter
	k := pickKey{f, mod, isMain}
	seen := e.picks[k]
	if seen == nil {
		seen = map[string]bool{}
		e.picks[k] = seen
	}
	return func(path string, isMain bool, name string) bool {
		v, ok := seen[name]
		if !ok {
			v = f.Function(path, isMain, name)
			seen[name] = v
		}
		if v || len(chosen[name]) == 0 {
			return v
		}
		return f.Resolved(path, isMain, name, chosen[name])
	}
}

// pickedSymbols are the symbols of mod that pick selects, in order,
// listed once per module, filter and ifunc choices (symbolsWhere): a
// process whose selection no calling context changes goes through these
// alone, not through every symbol's name (a sixteenth of the tracer's CPU
// in a shell loop running /bin/true, the C library's ifuncs chosen alike
// in every process).
func (e *engine) pickedSymbols(mod *instrument.Module, isMain bool, chosen map[string][]string, pick func(path string, isMain bool, name string) bool) []instrument.Symbol {
	return e.symbolsWhere(symbolList{pickKey: pickKey{e.opt.Filter, mod, isMain}, chosen: choicesKey(chosen)}, func(sym instrument.Symbol) bool {
		return pick(mod.Path, isMain, sym.Name)
	})
}

// choicesKey is ifunc choices as a comparable key: each name and its
// implementations, by name.
func choicesKey(chosen map[string][]string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(chosen)) {
		b.WriteString(name)
		for _, impl := range chosen[name] {
			b.WriteByte(',')
			b.WriteString(impl)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// symbolList names a list of a module's symbols symbolsWhere keeps: the
// filter's choice (as picker makes it, with the ifunc choices behind it),
// or the unwinders.
type symbolList struct {
	pickKey
	chosen    string
	unwinders bool
}

// symbolsWhere is the symbols of k.mod that keep accepts, in order,
// worked out once for the session: every process maps the same files (a
// shell script's commands each the C library, its thousands of symbols
// looked at again each time).
func (e *engine) symbolsWhere(k symbolList, keep func(instrument.Symbol) bool) []instrument.Symbol {
	if syms, ok := e.symbolLists[k]; ok {
		return syms
	}
	var syms []instrument.Symbol
	for _, sym := range k.mod.Symbols {
		if keep(sym) {
			syms = append(syms, sym)
		}
	}
	if e.symbolLists == nil {
		e.symbolLists = map[symbolList][]instrument.Symbol{}
	}
	e.symbolLists[k] = syms
	return syms
}

// scan loads the modules mapped in p that are new since the last scan and
// puts entry breakpoints on their selected functions. tid is a stopped
// thread of p. It returns how many entry breakpoints it inserted.
func (e *engine) scan(tid int, p *process) (int, error) {
	as := p.as
	if !as.sole {
		return e.scanMaps(tid, p)
	}
	// Nothing runs in the space: its code goes in at the end, in a few
	// large writes (pending.go).
	as.batch = newPending()
	n, err := e.scanMaps(tid, p)
	if ferr := as.flushPending(tid); ferr != nil && err == nil {
		return 0, ferr
	}
	return n, err
}

// scanMaps is scan's work.
func (e *engine) scanMaps(tid int, p *process) (int, error) {
	maps, err := instrument.ReadMaps(p.pid)
	if err != nil {
		return 0, err
	}
	as := p.as
	as.untraced = e.untracedCode(maps, p.exe)
	inserted := 0
	var rips []uint64
	if as.inl != nil {
		rips = e.threadRips(as)
	}
	// Attaching, a thread may be in a signal handler that returns into
	// any function, or into a killed profiler's patch we undo (resume.go);
	// a later scan patches a library just mapped, a launched program's
	// first its image at its entry.
	noteStacks := len(as.paths) == 0 && !e.launched
	as.anon = nil
	defer func() { as.anon, as.resumes = nil, nil }()
	type taken struct {
		path                     string
		mod                      *instrument.Module
		bias                     uint64
		isMain, linker, selected bool
	}
	var todo []taken
	for _, path := range instrument.LoadedPaths(maps) {
		if as.paths[path] {
			continue
		}
		as.paths[path] = true
		for _, l := range e.opt.Filter.LibsSelecting(path) {
			e.libsSeen[l] = true
		}
		isMain, linker, selected := e.selects(path, p.exe)
		unwinder := as.inl != nil && isUnwinderLib(path)
		if !selected && !unwinder {
			continue
		}
		mod, fresh, err := e.open(path)
		if err == nil && fresh && selected {
			e.sweep(mod, path, isMain)
		}
		if err != nil {
			if isMain && errors.Is(err, instrument.ErrNoSymbols) {
				// Trace what there is: its libraries, and what exec brings.
				p.stripped = true
				e.s.Warn(fmt.Sprintf("%s has no symbol table: only its libraries' functions are traced", baseName(path)))
			}
			continue // an unreadable library is left untraced
		}
		bias, err := mod.Bias(maps)
		if err != nil {
			delete(as.paths, path) // not fully mapped yet: look again later
			continue
		}
		todo = append(todo, taken{path, mod, bias, isMain, linker, selected})
	}
	// A profiler killed while attached left its inline patches, each a
	// jump to its own stubs. Every one goes before the first of ours is
	// written: the stubs of two tracers must never be live together (a
	// tail call from a function with the one's patch through one with the
	// other's and back to the first's made its stub take its own shadow
	// entry for the slot, now holding the other's return stub, for an
	// abandoned frame: the return then found no entry, ud2, SIGILL). Killed
	// during this pass or the next, we leave one tracer's patches, never
	// two. A patch jumps into a killed profiler's code, which stays
	// mapped: without executable memory not ours, there is none to look
	// for in every function.
	if len(todo) > 0 && as.foreignCode(maps) {
		e.stepOutOfLeftovers(tid, as, maps)
		if as.inl != nil {
			rips = e.threadRips(as) // the steps moved some
		}
		noteStacks = true
	}
	if noteStacks {
		e.noteResumes(as)
	}
	for _, w := range todo {
		if !as.foreignCode(maps) {
			break
		}
		lo, hi := moduleRange(maps, w.path)
		l := &loaded{mod: w.mod, bias: w.bias, lo: lo, hi: hi}
		// Its call sites first: a function's first bytes may hold one.
		e.undoLeftoverSites(tid, as, w.path, maps)
		for _, sym := range w.mod.Symbols {
			e.undoLeftover(tid, as, l, sym)
		}
	}
	if !as.reclaimed && as.foreignCode(maps) {
		as.reclaimed = true
		e.reclaimLeftovers(tid, p, maps)
	}
	for _, w := range todo {
		path, mod, bias, isMain, linker, selected := w.path, w.mod, w.bias, w.isMain, w.linker, w.selected
		if linker {
			e.hookLinker(tid, as, mod, bias)
			if !e.opt.Filter.Module(path, false) {
				continue
			}
		}
		if as.inl != nil {
			e.probeUnwinders(tid, as, &loaded{mod: mod, bias: bias}, rips)
		}
		if !selected {
			continue
		}
		l := e.addModule(as, maps, mod, bias, isMain)
		chosen := ifuncChoices(tid, l)
		pick := e.picker(mod, isMain, chosen)
		syms := mod.Symbols
		if e.opt.Context == nil {
			// Only the filter decides: the symbols it chose before,
			// each picked (no name looked up again).
			syms = e.pickedSymbols(mod, isMain, chosen, pick)
			pick = func(string, bool, string) bool { return true }
		}
		as.prefetch(tid, l, syms)
		for _, sym := range syms {
			if _, ok := e.probeSymbol(tid, as, l, sym, rips, pick); ok {
				inserted++
			}
		}
	}
	return inserted, nil
}

// addModule records module mod, loaded at bias in space as.
func (e *engine) addModule(as *space, maps []instrument.Mapping, mod *instrument.Module, bias uint64, isMain bool) *loaded {
	lo, hi := moduleRange(maps, mod.Path)
	l := &loaded{mod: mod, bias: bias, lo: lo, hi: hi, main: isMain,
		modIdx: e.s.Interner().Module(mod.Path, mod.BuildID)}
	as.modules = append(as.modules, l)
	prof := e.s.Profile()
	prof.Modules[l.modIdx].DynamicOnly = mod.Dynamic
	prof.Modules[l.modIdx].SymbolsFrom = mod.SymbolsFrom
	if isMain && prof.Meta.BuildID == "" {
		prof.Meta.BuildID = mod.BuildID
	}
	return l
}

// probeSymbol gives function sym of module l a probe if selected says so
// (or it is a component of the calling context): inline where it can be
// patched (unless --probes trap), else a trap. It returns the function
// and whether it got a probe.
func (e *engine) probeSymbol(tid int, as *space, l *loaded, sym instrument.Symbol, rips []uint64,
	selected func(path string, isMain bool, name string) bool) (int, bool) {
	path := l.mod.Path
	comp, gated := -1, false
	if e.opt.Context != nil {
		comp, gated = e.opt.Context.Role(path, sym.Name)
	}
	if comp < 0 && !selected(path, l.main, sym.Name) {
		return model.None, false
	}
	fn := e.s.Interner().Func(l.modIdx, sym.Name)
	if e.s.Selected(fn) {
		e.noteArity(fn, l.mod, sym)
	}
	if comp >= 0 || gated {
		e.noteContext(fn, comp, gated)
	}
	why := "" // --probes trap: asked for, not refused
	counted := as.inl != nil && e.countedFn(fn)
	// A function that returns twice takes no timed inline probe; unless
	// its time was asked for, it is counted exactly, with no stop.
	twice := as.inl != nil && !counted && (returnsTwice[sym.Raw] || returnsTwice[sym.Name]) && !e.timeAsked(fn)
	if twice {
		counted = true
	}
	if counted {
		if e.counted == nil {
			e.counted = map[int]bool{}
		}
		e.counted[fn] = true
	}
	if as.inl != nil {
		err := errors.New("function index beyond an inline id's 23 bits")
		if fn <= stub.FnMask {
			err = e.patchInline(tid, as, l, sym, e.inlineID(fn), rips)
			var shape prologueRefused
			if errors.As(err, &shape) {
				err = e.patchSites(tid, as, l, sym, e.inlineID(fn), err)
			}
		}
		if err == nil {
			switch {
			case twice:
				e.probed(fn, model.ProbeCounted, errReturnsTwice.Error()+": counted, not timed")
			case counted:
				e.probed(fn, model.ProbeCounted, "")
			default:
				e.probed(fn, model.ProbeInline, "")
			}
			return fn, true
		}
		delete(e.counted, fn) // a trap probe times its calls
		e.refused(err)
		if e.opt.Probes == ProbesInline {
			e.probed(fn, model.ProbeNone, err.Error())
			return fn, false
		}
		why = err.Error()
	}
	addr := sym.Value + l.bias
	if err := e.insertEntry(tid, as, addr, fn); err != nil {
		note := "breakpoint: " + err.Error()
		if why != "" {
			note = why + "; " + note
		}
		e.probed(fn, model.ProbeNone, note)
		return fn, false
	}
	e.probed(fn, model.ProbeTrap, why)
	if e.gated(fn) {
		e.gateEntry(tid, as, as.bps[addr])
	}
	return fn, true
}

// isDynamicLinker tells ld.so by name.
func isDynamicLinker(path string) bool {
	b := baseName(path)
	return len(b) > 3 && b[:3] == "ld-"
}

// hookLinker puts a breakpoint on the dynamic linker's _dl_debug_state,
// which it calls whenever the list of loaded objects changes (the r_debug
// protocol debuggers use): dlopen'ed libraries are instrumented there.
func (e *engine) hookLinker(tid int, as *space, mod *instrument.Module, bias uint64) {
	for _, sym := range mod.Symbols {
		if sym.Name != "_dl_debug_state" {
			continue
		}
		addr := sym.Value + bias
		if b, ok := as.bps[addr]; ok {
			b.LinkerHook = true
			return
		}
		if b, err := e.insert(tid, as, addr); err == nil {
			b.LinkerHook = true
			e.stats.Breakpoints--
		}
		return
	}
}

// linkMapChanged rescans the maps after dlopen or dlclose: new libraries
// are instrumented, breakpoints of unmapped ones are forgotten.
func (e *engine) linkMapChanged(t *thread) {
	defer e.held(t, e.now())
	as := t.proc.as
	maps, err := instrument.ReadMaps(t.proc.pid)
	if err != nil {
		return
	}
	mapped := map[string]bool{}
	for _, p := range instrument.LoadedPaths(maps) {
		mapped[p] = true
	}
	kept := as.modules[:0]
	for _, m := range as.modules {
		if mapped[m.mod.Path] || m.main {
			kept = append(kept, m)
			continue
		}
		for addr := range as.bps {
			if addr >= m.lo && addr < m.hi {
				delete(as.bps, addr)
			}
		}
		for addr := range as.parked {
			if addr >= m.lo && addr < m.hi {
				delete(as.parked, addr)
			}
		}
		for addr := range as.gated {
			if addr >= m.lo && addr < m.hi {
				delete(as.gated, addr) // else the gate re-arms it in whatever is mapped there next
			}
		}
		if as.inl != nil {
			for addr := range as.inl.Patches {
				if addr >= m.lo && addr < m.hi {
					delete(as.inl.Patches, addr)
				}
			}
			for addr := range as.inl.Sites {
				if addr >= m.lo && addr < m.hi {
					delete(as.inl.Sites, addr)
				}
			}
		}
		e.healDrop(t.tid, as, m.lo, m.hi)
		delete(as.paths, m.mod.Path)
	}
	as.modules = kept
	t.proc.unwind = nil // the modules to unwind through changed
	for p := range as.paths {
		if !mapped[p] {
			delete(as.paths, p)
		}
	}
	e.scan(t.tid, t.proc)
}

func moduleRange(maps []instrument.Mapping, path string) (lo, hi uint64) {
	for _, m := range maps {
		if m.Path != path {
			continue
		}
		if lo == 0 || m.Start < lo {
			lo = m.Start
		}
		if m.End > hi {
			hi = m.End
		}
	}
	return lo, hi
}

// insertEntry puts an entry breakpoint for fn at addr (or marks an
// existing return-site breakpoint there as an entry too).
func (e *engine) insertEntry(tid int, as *space, addr uint64, fn int) error {
	if b, ok := as.parked[addr]; ok {
		if err := e.unpark(tid, as, b); err != nil {
			return err
		}
		b.Transient = false // an entry stays
	}
	if b, ok := as.bps[addr]; ok {
		if b.Fn == model.None && !b.Special {
			b.Fn = fn
		}
		return nil
	}
	b, err := e.insert(tid, as, addr)
	if err != nil {
		return err
	}
	b.Fn = fn
	return nil
}

// insertReturn puts a return-site breakpoint at ret; code holds the bytes
// before it (for the call kind).
func (e *engine) insertReturn(tid int, as *space, ret uint64) (*bp, error) {
	if b, ok := as.parked[ret]; ok {
		if err := e.unpark(tid, as, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	if b, ok := as.bps[ret]; ok {
		if !b.IsReturn {
			b.IsReturn = true
			b.Kind = e.callKind(tid, as, ret)
		}
		return b, nil
	}
	b, err := e.insert(tid, as, ret)
	if err != nil {
		return nil, err
	}
	b.IsReturn = true
	b.Kind = e.callKind(tid, as, ret)
	return b, nil
}

func (e *engine) callKind(tid int, as *space, ret uint64) model.CallKind {
	code := make([]byte, instrument.CallLookback)
	if err := as.readText(tid, ret-uint64(len(code)), code); err != nil {
		return model.KindUnknown
	}
	as.origBytes(ret-uint64(len(code)), code)
	k, _ := instrument.ClassifyCall(code, ret, as.isPLT)
	return k
}

// insert plans the displaced instruction at addr, writes its out-of-line
// copy and the int3.
func (e *engine) insert(tid int, as *space, addr uint64) (*bp, error) {
	if as.holding() {
		return nil, errHeldTrap
	}
	code := make([]byte, 16)
	if err := as.readText(tid, addr, code); err != nil {
		return nil, err
	}
	as.origBytes(addr, code)
	a := as.areaNear(addr)
	if a == nil {
		var err error
		if a, err = e.newArea(tid, as, addr); err != nil {
			return nil, err
		}
	}
	slot := a.base + a.next
	plan, err := instrument.PlanAt(code, addr, slot)
	if err != nil {
		return nil, err
	}
	if plan.Emulate == instrument.EmuNone {
		a.alloc()
		if err := ptrace.WriteMem(tid, slot, plan.OOL); err != nil {
			return nil, err
		}
	}
	e.healAdd(tid, as, addr, code[0])
	if err := as.poke(tid, addr, []byte{0xcc}); err != nil {
		return nil, err
	}
	b := trap.New(addr, code[0], plan)
	as.bps[addr] = b
	delete(as.removed, addr)
	e.stats.Breakpoints++
	return b, nil
}

// newArea maps a new out-of-line area near addr. The first area is mapped
// by a syscall injected at the program's entry point (every thread is
// stopped then); later ones from slot 0 of the first area.
func (e *engine) newArea(tid int, as *space, addr uint64) (*area, error) {
	site := as.entry
	if len(as.areas) > 0 {
		site = as.areas[0].base
	}
	if site == 0 {
		return nil, fmt.Errorf("no injection site for an out-of-line area")
	}
	return e.mapArea(tid, as, site, addr)
}

// remove restores the original byte of b.
func (e *engine) remove(tid int, as *space, b *bp) error {
	delete(as.bps, b.Addr)
	as.removed[b.Addr] = true
	return as.poke(tid, b.Addr, []byte{b.Orig})
}

// entryPoint returns the runtime address of the main executable's entry.
func entryPoint(pid int) (uint64, error) {
	aux, err := procfs.Auxv(pid)
	if err != nil {
		return 0, err
	}
	if e, ok := aux[procfs.AtEntry]; ok {
		return e, nil
	}
	return 0, fmt.Errorf("no AT_ENTRY in auxv of %d", pid)
}

func baseName(p string) string { return filepath.Base(p) }

// selects tells which modules a scan opens: the executable exe, the
// dynamic linker, and what the filter or the calling context selects.
func (e *engine) selects(path, exe string) (isMain, linker, selected bool) {
	isMain, linker = path == exe, isDynamicLinker(path)
	selected = isMain || linker || e.opt.Filter.Module(path, false) ||
		(e.opt.Context != nil && e.opt.Context.Module(path))
	return isMain, linker, selected
}

// preopen opens, before the attach stops process pid, the modules its
// first scan will open, and sweeps their functions for inline patches
// (instrument.Module.Sweep) and plans their exit probes (prePlan): all of
// it reads files only, and done while the process runs it does not hold
// the process stopped. A module that changes before the scan is opened
// again there.
func (e *engine) preopen(pid int) {
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return
	}
	exe := procfs.Exe(pid)
	e.opened = map[string]*instrument.Module{}
	e.debugNet = true // the process runs on: nobody waits for the network
	defer func() { e.debugNet = false }()
	biases := map[string]uint64{}
	for _, path := range instrument.LoadedPaths(maps) {
		isMain, _, selected := e.selects(path, exe)
		if !selected {
			continue
		}
		if m, ok := e.shared[path]; ok && m.Unchanged() {
			e.opened[path] = m // read and swept for a process attached before
			if b, err := m.Bias(maps); err == nil {
				biases[path] = b
			}
			continue
		}
		mod, err := instrument.OpenWith(path, e.debugSearch())
		if err != nil {
			continue
		}
		e.sweep(mod, path, isMain)
		e.opened[path] = mod
		if b, err := mod.Bias(maps); err == nil {
			biases[path] = b
		}
	}
	e.unwindAt = instrument.LoadedPaths(maps)
	e.unwindPre = e.loadUnwind(pid, maps, biases)
}

// sweep finds the entry branches of the functions of mod (at path) that
// the filters select and plans their exit probes, on every CPU, before
// any is patched: for a module no process of the session has mapped yet.
func (e *engine) sweep(mod *instrument.Module, path string, isMain bool) {
	if e.opt.Probes == ProbesTrap {
		return
	}
	want := func(sym instrument.Symbol) bool {
		if e.opt.Context != nil {
			if comp, _ := e.opt.Context.Role(path, sym.Name); comp >= 0 {
				return true
			}
		}
		return e.opt.Filter.Function(path, isMain, sym.Name)
	}
	// What an earlier session planned from the same file and symbols
	// is not planned again (plancache.go).
	key := e.planKey(mod)
	planned, cached := e.loadPlans(mod, key)
	// The exit plans first: their walks give the sweep each function
	// they read whole.
	if e.exitProbes {
		// Its walks read every function: from memory, not the file each.
		mod.LoadCode()
		e.prePlan(mod, runtime.GOMAXPROCS(0), func(sym instrument.Symbol) bool { return !planned[sym.Value] && want(sym) })
	}
	mod.Sweep(runtime.GOMAXPROCS(0), want)
	e.savePlans(mod, key, cached)
}

// preloadedUnwind gives process p the call-frame information preopen
// loaded, if p maps the same modules now.
func (e *engine) preloadedUnwind(p *process) {
	maps, err := instrument.ReadMaps(p.pid)
	if err == nil && e.unwindPre != nil && slices.Equal(instrument.LoadedPaths(maps), e.unwindAt) {
		p.unwind = e.unwindPre
	}
	e.unwindPre, e.unwindAt = nil, nil
}

// open returns the module at path: the one preopen opened or another
// process of the session did, if the file is still the one it read, else
// the file opened now (fresh).
func (e *engine) open(path string) (m *instrument.Module, fresh bool, err error) {
	if m, ok := e.opened[path]; ok {
		delete(e.opened, path)
		if m.Unchanged() {
			e.share(path, m)
			return m, false, nil
		}
	}
	if m, ok := e.shared[path]; ok && m.Unchanged() {
		return m, false, nil
	}
	m, err = instrument.OpenWith(path, e.debugSearch())
	if err == nil {
		e.share(path, m)
	}
	return m, true, err
}

// share keeps module m of path for the processes traced after this one
// (attached with it, or exec'd later): a module is read and swept once,
// as a forked child shares its parent's. A shell script's every command
// opened the C library again, its symbols from a debug file: a fifth of
// each command's scan (perf, a bash loop).
func (e *engine) share(path string, m *instrument.Module) {
	if e.shared == nil {
		e.shared = map[string]*instrument.Module{}
	}
	e.shared[path] = m
}

// debugSearch is where modules' debug files are looked for now: with
// debuginfod only while no traced thread waits for it (preopen, before an
// attach stops the process; a launched program's first image, which has
// not begun). A library loaded later or an exec'd image, opened while its
// thread is stopped, takes local debug files only: a server's answer can
// take seconds.
func (e *engine) debugSearch() *instrument.DebugSearch {
	d := e.opt.Debug
	if d == nil || d.Debuginfod == nil || e.debugNet {
		return d
	}
	if e.localDebug == nil {
		e.localDebug = &instrument.DebugSearch{Dir: d.Dir, Warn: d.Warn}
	}
	return e.localDebug
}
