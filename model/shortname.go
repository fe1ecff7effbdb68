package model

import "github.com/profile-dev/profile/names"

// ShortFuncName is FuncName with the function's name shortened for tables
// and graph labels (names.Short: parameter lists dropped, template
// arguments elided): `module:short` for library functions. It is for
// display only: instances of one template share a short name, so rows,
// nodes, sort ties and filters go by FuncName.
func (p *Profile) ShortFuncName(f int) string {
	fn := p.Functions[f]
	short := names.Short(fn.Name)
	if fn.Module == 0 || p.isMainModule(fn.Module) {
		return short
	}
	return FuncKey(p.Modules[fn.Module].Path, short)
}

// DisplayName is what a presenter shows of function f: FuncName with
// full (--full-names), else ShortFuncName.
func (p *Profile) DisplayName(f int, full bool) string {
	if full {
		return p.FuncName(f)
	}
	return p.ShortFuncName(f)
}
