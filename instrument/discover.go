package instrument

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/names"
)

// Callee discovery (profile discover, record --expand): the functions a
// function can call, found by disassembling it, level by level.

// CalleeKind is how a discovered callee is reached.
type CalleeKind string

// The callee kinds.
const (
	// CalleeDirect: call (or jump) rel32 to a function of the same module.
	CalleeDirect CalleeKind = "direct"
	// CalleePLT: through a PLT stub or, for code built with -fno-plt, a
	// GOT slot: a function imported from another module.
	CalleePLT CalleeKind = "plt"
	// CalleeIndirect: through a register or memory: an indirect call site,
	// whose targets only a run can tell.
	CalleeIndirect CalleeKind = "indirect"
)

// Site is an instruction that calls (or tail-jumps to) a callee.
type Site struct {
	// Part names the symbol holding the instruction when it is a part GCC
	// split off the function ("f.cold"), "" for the function itself.
	Part   string
	Offset uint64 // from the start of Part, or of the function
	Addr   uint64 // link-time address
}

// FuncRef names a function of a module as the tracer names it.
type FuncRef struct {
	// Module is the base name of the module's file, "" for an imported
	// function that no library searched defines.
	Module string
	// Name is the symbol (demangled), "" for an address no symbol starts
	// at.
	Name  string
	Main  bool   // Module is the main executable
	Addr  uint64 // link-time address in Module, 0 when unknown
	Size  uint64
	IFunc bool // an IFUNC: the implementation is chosen at load time
}

// Key is the function's "module:name", as --filter and --expand match it;
// "?:name" for an import found in no library.
func (r FuncRef) Key() string {
	mod := r.Module
	if mod == "" {
		mod = "?"
	}
	if r.Name == "" {
		return fmt.Sprintf("%s:%#x", mod, r.Addr)
	}
	return model.FuncKey(mod, r.Name)
}

// Display is the function's name as profiles show it: bare in the main
// executable, "module:name" elsewhere. With full false, C++ and Rust names
// are shortened (names.Short).
func (r FuncRef) Display(full bool) string {
	if r.Name == "" || r.Module == "" {
		return r.Key()
	}
	name := r.Name
	if !full {
		name = names.Short(name)
	}
	if r.Main {
		return name
	}
	return model.FuncKey(r.Module, name)
}

// traceable tells a function the tracer can select by name.
func (r FuncRef) traceable() bool { return r.Module != "" && r.Name != "" && !r.IFunc }

// Observed is a function a profile saw called from an indirect call site.
type Observed struct {
	Func  FuncRef
	Calls int64 // indirect calls of Func from the caller
}

// Callee is one node of a discovery tree: a function and its callees, or
// an indirect call site.
type Callee struct {
	Level int        // 0 for the function asked about
	Kind  CalleeKind // "" for the root
	Tail  bool       // reached by a jump, not a call (a tail call)
	Sites []Site     // in the caller, by address
	Func  *FuncRef   // nil for an indirect site

	// Operand is an indirect site's target operand ("rax", "[rbx+0x8]";
	// a rip-relative one as its link-time address, "[0x4038]").
	Operand string
	// Observed are the functions a profile saw the caller call
	// indirectly, most calls first; ObservedKnown says a profile was
	// given and the caller ran in it. A profile cannot tell which site
	// made a call: with several indirect sites (ObservedShared) each
	// carries all of them.
	Observed       []Observed
	ObservedKnown  bool
	ObservedShared bool

	Expanded bool   // its callees were listed (Callees, maybe none)
	Repeat   bool   // not expanded here: it is at an earlier place of the tree
	RepeatOf int    // Repeat: the level of that place
	Why      string // why it was not expanded, other than depth and Repeat
	Notes    []string
	Callees  []*Callee
}

// Discovery is the tree of callees of one function.
type Discovery struct {
	Root     *Callee
	Depth    int
	Warnings []string // about the inputs (a library not found, another build)
}

// Functions returns the traceable functions of the tree, the root first,
// each once, level by level: what --expand adds to the filter.
func (d *Discovery) Functions() []FuncRef {
	var out []FuncRef
	seen := map[string]bool{}
	level := []*Callee{d.Root}
	for len(level) > 0 {
		var next []*Callee
		for _, c := range level {
			if c.Func != nil && c.Func.traceable() && !seen[c.Func.Key()] {
				seen[c.Func.Key()] = true
				out = append(out, *c.Func)
			}
			next = append(next, c.Callees...)
		}
		level = next
	}
	return out
}

// IndirectSites counts the tree's indirect call sites.
func (d *Discovery) IndirectSites() int {
	n := 0
	var walk func(*Callee)
	walk = func(c *Callee) {
		if c.Kind == CalleeIndirect {
			n++
		}
		for _, k := range c.Callees {
			walk(k)
		}
	}
	walk(d.Root)
	return n
}

// ErrFuncNotFound is returned (wrapped) by Discover for a function that no
// module searched defines.
var ErrFuncNotFound = errors.New("function not found")

// Discover lists the callees of the function fn (a symbol, or
// "module:symbol" with module a file's base name), then theirs, to depth
// levels below it (depth >= 1). Each function is expanded once, at its
// first (shallowest) place; later places are marked Repeat, at any level,
// recursion included.
func (d *Discoverer) Discover(fn string, depth int) (*Discovery, error) {
	if depth < 1 {
		return nil, fmt.Errorf("discover %s: depth %d: must be at least 1", fn, depth)
	}
	ref, err := d.find(fn)
	if err != nil {
		return nil, err
	}
	root := &Callee{Func: &ref}
	seen := map[string]int{ref.Key(): 0} // expanded (or to be) at that level
	for queue := []*Callee{root}; len(queue) > 0; queue = queue[1:] {
		c := queue[0]
		if c.Level >= depth {
			continue
		}
		d.expand(c)
		for _, k := range c.Callees {
			if k.Func == nil || k.Why != "" {
				continue
			}
			if lvl, ok := seen[k.Func.Key()]; ok {
				k.Repeat, k.RepeatOf = true, lvl
				continue
			}
			if k.Level >= depth {
				continue
			}
			seen[k.Func.Key()] = k.Level
			queue = append(queue, k)
		}
	}
	if root.Why != "" {
		return nil, fmt.Errorf("discover %s: %s", fn, root.Why)
	}
	return &Discovery{Root: root, Depth: depth, Warnings: append([]string(nil), d.warnings...)}, nil
}

// expand fills c.Callees from its function's code.
func (d *Discoverer) expand(c *Callee) {
	mod, err := d.module(c.Func.Module)
	if err != nil {
		c.Why = err.Error()
		return
	}
	sym, ok := mod.Lookup(c.Func.Addr)
	if !ok || sym.Value != c.Func.Addr {
		c.Why = fmt.Sprintf("no symbol at %#x", c.Func.Addr)
		return
	}
	calls, notes, err := mod.sweepCalls(sym)
	if err != nil {
		c.Why = err.Error()
		return
	}
	c.Expanded = true
	c.Notes = append(c.Notes, notes...)
	byKey := map[string]*Callee{}
	var indirect []*Callee
	for _, rc := range calls {
		k := &Callee{Level: c.Level + 1, Kind: rc.kind, Tail: rc.tail, Sites: []Site{rc.site}}
		if rc.kind == CalleeIndirect {
			k.Operand = rc.operand
			indirect = append(indirect, k)
			c.Callees = append(c.Callees, k)
			continue
		}
		ref := d.callTarget(mod, c.Func.Main, rc)
		k.Func = &ref
		switch {
		case ref.IFunc:
			k.Why = "an IFUNC: its implementation is chosen when the program loads"
		case ref.Name == "":
			k.Why = "no symbol starts there"
		case ref.Module == "":
			k.Why = "no library searched defines it"
		}
		id := fmt.Sprintf("%s|%s|%v", ref.Key(), rc.kind, rc.tail)
		if prev := byKey[id]; prev != nil {
			prev.Sites = append(prev.Sites, rc.site)
			continue
		}
		byKey[id] = k
		c.Callees = append(c.Callees, k)
	}
	sort.SliceStable(c.Callees, func(i, j int) bool { return c.Callees[i].Sites[0].Addr < c.Callees[j].Sites[0].Addr })
	d.attachObserved(c, indirect)
}

// callTarget names the function a direct or PLT call reaches.
func (d *Discoverer) callTarget(mod *Module, main bool, rc rawCall) FuncRef {
	if rc.kind == CalleePLT {
		if rc.name == "" {
			return FuncRef{Addr: rc.target}
		}
		return d.resolveImport(rc.name)
	}
	ref := FuncRef{Module: d.nameOf(mod), Main: main, Addr: rc.target}
	if s, ok := mod.Lookup(rc.target); ok && s.Value == rc.target {
		ref.Name, ref.Size = s.Name, s.Size
	}
	return ref
}

// find resolves a function given as "symbol" or "module:symbol": in the
// main executable first, then in the libraries in search order. A symbol
// matches by its demangled name, its raw name, or, when that is unique in
// its module, its short name (names.Short: "ns::f" for "ns::f(int)").
func (d *Discoverer) find(spec string) (FuncRef, error) {
	if spec == "" {
		return FuncRef{}, fmt.Errorf("empty function name")
	}
	order := d.moduleNames()
	if mod, name, ok := strings.Cut(spec, ":"); ok && mod != "" && name != "" && !strings.HasPrefix(name, ":") {
		for _, m := range order {
			if m == mod {
				return d.findIn(m, name, spec)
			}
		}
	}
	var firstErr error
	for _, m := range order {
		ref, err := d.findIn(m, spec, spec)
		if err == nil || !errors.Is(err, ErrFuncNotFound) {
			return ref, err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return FuncRef{}, firstErr
}

// findIn looks for the symbol name in the module called mod.
func (d *Discoverer) findIn(mod, name, spec string) (FuncRef, error) {
	m, err := d.module(mod)
	if err != nil {
		return FuncRef{}, err
	}
	ref := func(s Symbol) FuncRef {
		return FuncRef{Module: mod, Name: s.Name, Main: mod == d.mainName, Addr: s.Value, Size: s.Size}
	}
	for _, s := range m.Symbols {
		if s.Name == name || s.Raw == name {
			return ref(s), nil
		}
	}
	var short []Symbol
	for _, s := range m.Symbols {
		if names.Short(s.Name) == name {
			short = append(short, s)
		}
	}
	switch {
	case len(short) == 1:
		return ref(short[0]), nil
	case len(short) > 1:
		var all []string
		for _, s := range short {
			all = append(all, s.Name)
		}
		return FuncRef{}, fmt.Errorf("%s is ambiguous in %s: %s", spec, mod, strings.Join(all, ", "))
	}
	if m.Dynamic {
		return FuncRef{}, fmt.Errorf("%s: %w in %s, which has no symbol table (stripped?): only its exported functions are known", spec, ErrFuncNotFound, mod)
	}
	return FuncRef{}, fmt.Errorf("%s: %w in %s", spec, ErrFuncNotFound, d.searched(mod))
}

// searched says where a function was looked for.
func (d *Discoverer) searched(mod string) string {
	if mod != d.mainName {
		return mod
	}
	if n := len(d.libs); n > 0 {
		return fmt.Sprintf("%s or its %d libraries", mod, n)
	}
	return mod
}

// nameOf returns the name a module is known by here.
func (d *Discoverer) nameOf(m *Module) string {
	if m == d.main {
		return d.mainName
	}
	return filepath.Base(m.Path)
}
