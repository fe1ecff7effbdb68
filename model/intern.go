package model

// Interner finds or adds modules and functions of a profile by identity.
// It keeps index maps beside the profile so repeated lookups stay O(1).
type Interner struct {
	p     *Profile
	mods  map[string]int
	funcs map[funcKey]int
}

type funcKey struct {
	module int
	name   string
}

// NewInterner indexes p's existing modules and functions.
func NewInterner(p *Profile) *Interner {
	in := &Interner{p: p, mods: make(map[string]int), funcs: make(map[funcKey]int)}
	for i, m := range p.Modules {
		in.mods[m.Path] = i
	}
	for i, f := range p.Functions {
		in.funcs[funcKey{f.Module, f.Name}] = i
	}
	return in
}

// Module returns the index of the module at path, adding it if new.
func (in *Interner) Module(path, buildID string) int {
	if i, ok := in.mods[path]; ok {
		if in.p.Modules[i].BuildID == "" {
			in.p.Modules[i].BuildID = buildID
		}
		return i
	}
	in.p.Modules = append(in.p.Modules, Module{Path: path, BuildID: buildID})
	i := len(in.p.Modules) - 1
	in.mods[path] = i
	return i
}

// Func returns the index of function (module, name), adding it if new.
func (in *Interner) Func(module int, name string) int {
	k := funcKey{module, name}
	if i, ok := in.funcs[k]; ok {
		return i
	}
	in.p.Functions = append(in.p.Functions, Function{Module: module, Name: name})
	i := len(in.p.Functions) - 1
	in.funcs[k] = i
	return i
}
