package names

import "github.com/ianlancetaylor/demangle"

// ShortMangled returns Short of the mangled C++ or Rust symbol sym, with the
// demangler leaving out the function's own parameter list, and whether sym
// was a mangled name at all; if not it returns sym unchanged and false.
// For every symbol it agrees with Short(demangle.Filter(sym)), the name a
// profile stores.
func ShortMangled(sym string) (string, bool) {
	d, err := demangle.ToString(sym, demangle.NoParams)
	if err != nil {
		return sym, false
	}
	return Short(d), true
}
