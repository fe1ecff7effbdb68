package model

import (
	"cmp"
	"slices"
)

// FuncID is a function's identity across profiles (docs/design.md, Data
// model): its module and its symbol. Function indices and addresses are
// facts of one profile or one run; two runs line their functions up by
// FuncID.
type FuncID struct {
	Module string // the module's path, or its base name (see ByBaseName); "" for START
	Name   string // demangled symbol
}

// FuncID returns function f's identity, its module named by path.
func (p *Profile) FuncID(f int) FuncID {
	fn := p.Functions[f]
	return FuncID{Module: p.Modules[fn.Module].Path, Name: fn.Name}
}

// CompareFuncIDs orders identities by module, then name.
func CompareFuncIDs(a, b FuncID) int {
	return cmp.Or(cmp.Compare(a.Module, b.Module), cmp.Compare(a.Name, b.Name))
}

// Matching says which module names make two functions the same.
type Matching uint8

const (
	// ByPath: the same module path and symbol. Merge uses it: the runs of
	// one composite ran the same files.
	ByPath Matching = iota
	// ByBaseName: the same module base name and symbol, so that two builds
	// in different directories (a CI job's base and head) line up. Diff
	// uses it.
	ByBaseName
)

// FuncMap numbers the functions of several profiles by identity: the same
// function in two profiles gets one number. START is always number
// StartFunc.
type FuncMap struct {
	IDs   []FuncID // identity of each number
	match Matching
	index map[FuncID]int
}

// NewFuncMap returns a map holding START only.
func NewFuncMap(m Matching) *FuncMap {
	start := FuncID{Name: StartName}
	return &FuncMap{IDs: []FuncID{start}, match: m, index: map[FuncID]int{start: StartFunc}}
}

// ID returns function f of p's identity under the map's matching.
func (m *FuncMap) ID(p *Profile, f int) FuncID {
	if f == StartFunc {
		return FuncID{Name: StartName}
	}
	id := p.FuncID(f)
	if m.match == ByBaseName {
		id.Module = baseName(id.Module)
	}
	return id
}

// Add numbers every function of p, new identities after the known ones,
// and returns p's function index -> number.
func (m *FuncMap) Add(p *Profile) []int {
	nums := make([]int, len(p.Functions))
	for f := range p.Functions {
		id := m.ID(p, f)
		n, ok := m.index[id]
		if !ok {
			n = len(m.IDs)
			m.IDs = append(m.IDs, id)
			m.index[id] = n
		}
		nums[f] = n
	}
	return nums
}

// Lookup returns the number of identity id.
func (m *FuncMap) Lookup(id FuncID) (int, bool) {
	n, ok := m.index[id]
	return n, ok
}

// Sort renumbers the functions in canonical order: START first, then by
// module and name. Numbers returned by Add before are void.
func (m *FuncMap) Sort() {
	slices.SortFunc(m.IDs[1:], CompareFuncIDs)
	for n, id := range m.IDs {
		m.index[id] = n
	}
}
