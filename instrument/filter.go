package instrument

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/profile-dev/profile/model"
)

// Filter decides which functions are traced (the "shared library and routine
// filter").
//
// The candidates are every function of the main executable, every function
// of the libraries named with --lib, and the default-blocking functions
// (DefaultBlocking) of the C library. When include patterns are given, only
// candidates whose "module:function" matches one of them stay (module is the
// file's base name, e.g. "libc.so.6:usleep", "recursion:fib"; function is
// the demangled name). Candidates matching an exclude pattern are dropped.
// Functions that cannot be breakpointed safely are never traced (see
// neverTrace).
//
// Extra functions (WithFunctions, from --expand) are selected by their exact
// "module:function" on top of the candidates and include patterns, in any
// module; exclude patterns still drop them.
type Filter struct {
	include, exclude []*regexp.Regexp
	libs             []string
	extra            map[string]bool // "module:function"
	extraMods        map[string]bool // module base names of extra
}

// NewFilter compiles the --filter (include), --exclude and --lib arguments.
// Patterns are Go regular expressions, unanchored.
func NewFilter(include, exclude, libs []string) (*Filter, error) {
	f := &Filter{}
	var err error
	if f.include, err = compileAll("--filter", include); err != nil {
		return nil, err
	}
	if f.exclude, err = compileAll("--exclude", exclude); err != nil {
		return nil, err
	}
	for _, l := range libs {
		if l == "" {
			return nil, fmt.Errorf("--lib: empty library name")
		}
		f.libs = append(f.libs, l)
	}
	return f, nil
}

// WithFunctions returns a copy of f that also selects the functions named
// by keys, each "module:function" with module a file's base name
// ("libc.so.6:puts", "app:parse"). The first colon ends the module, so a
// C++ function keeps its "::".
func (f *Filter) WithFunctions(keys []string) (*Filter, error) {
	g := *f
	g.extra = make(map[string]bool, len(f.extra)+len(keys))
	g.extraMods = make(map[string]bool, len(f.extraMods)+len(keys))
	for k := range f.extra {
		g.extra[k] = true
	}
	for m := range f.extraMods {
		g.extraMods[m] = true
	}
	for _, k := range keys {
		mod, name, ok := strings.Cut(k, ":")
		if !ok || mod == "" || name == "" {
			return nil, fmt.Errorf("function %q: want module:function", k)
		}
		g.extra[k] = true
		g.extraMods[mod] = true
	}
	return &g, nil
}

func compileAll(flag string, patterns []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// Module reports whether any function of the module at path could be
// selected, so the tracer can skip opening and parsing the others. It is
// conservative for the main executable and --lib libraries (their functions
// are not known yet) and exact for the C library, whose only candidates are
// the default-blocking functions.
func (f *Filter) Module(path string, isMain bool) bool {
	if isMain || f.isLib(path) || f.extraMods[filepath.Base(path)] {
		return true
	}
	if !isBlockingLibrary(path) {
		return false
	}
	for _, name := range defaultBlocking {
		if f.selected(path, name) {
			return true
		}
	}
	return false
}

// Function reports whether the function name (demangled, as in
// Symbol.Name) of the module at path is traced.
func (f *Filter) Function(path string, isMain bool, name string) bool {
	if neverTrace(name) {
		return false
	}
	if key := model.FuncKey(path, name); f.extra[key] {
		return !matchAny(f.exclude, key)
	}
	candidate := isMain || f.isLib(path) || (isDefaultBlocking(name) && isBlockingLibrary(path))
	return candidate && f.selected(path, name)
}

// Resolved is Function for the function name that the IFUNCs ifuncs of
// the same module resolved to in the process: the calls through an IFUNC
// (memcpy) land there (__memmove_avx_unaligned_erms), so a pattern that
// selects the IFUNC selects it too, unless an exclude pattern names it.
func (f *Filter) Resolved(path string, isMain bool, name string, ifuncs []string) bool {
	if f.Function(path, isMain, name) {
		return true
	}
	if neverTrace(name) || matchAny(f.exclude, model.FuncKey(path, name)) {
		return false
	}
	for _, n := range ifuncs {
		if f.Function(path, isMain, n) {
			return true
		}
	}
	return false
}

// selected applies the include and exclude patterns to a candidate.
func (f *Filter) selected(path, name string) bool {
	key := model.FuncKey(path, name)
	if len(f.include) > 0 && !matchAny(f.include, key) {
		return false
	}
	return !matchAny(f.exclude, key)
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// isLib reports whether path is a library named by --lib: a NAME with a
// slash must be the library's path; otherwise the base name must start with
// NAME or with "lib"+NAME, so "--lib plugin", "--lib libplugin" and
// "--lib libplugin.so" all select libplugin.so.1.
func (f *Filter) isLib(path string) bool { return len(f.LibsSelecting(path)) > 0 }

// LibsSelecting returns the --lib names that select the library at path.
func (f *Filter) LibsSelecting(path string) []string {
	base := filepath.Base(path)
	var out []string
	for _, l := range f.libs {
		if strings.Contains(l, "/") {
			if filepath.Clean(l) == filepath.Clean(path) {
				out = append(out, l)
			}
			continue
		}
		if strings.HasPrefix(base, l) || strings.HasPrefix(base, "lib"+l) {
			out = append(out, l)
		}
	}
	return out
}

// Libs returns the --lib names.
func (f *Filter) Libs() []string { return f.libs }

func isBlockingLibrary(path string) bool {
	base := filepath.Base(path)
	for _, p := range blockingLibraries {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// unsafeFunction reports the functions that cannot be traced with entry and
// return breakpoints:
//   - _start is entered by the kernel, not called: [rsp] holds argc, not a
//     return address, and it never returns.
//   - _init and _fini are pasted together from crti.o/crtn.o fragments in
//     .init/.fini (their symbols have no reliable size) and run from the
//     dynamic loader before main and after exit, while the tracer is being
//     set up or torn down.
//   - __libc_csu_init/__libc_csu_fini (glibc < 2.34 startup glue) and GCC's
//     crtstuff helpers run before main and after exit; frame_dummy
//     tail-jumps (jmp, not call) into register_tm_clones, whose entry
//     breakpoint would then see a return address it did not get, so the
//     entry and return events would not pair up.
//   - _dl_relocate_static_pie runs before relocation in static PIEs, when
//     even the return-site classification reads unrelocated code.
func unsafeFunction(name string) bool {
	switch name {
	case "_start", "_init", "_fini",
		"__libc_csu_init", "__libc_csu_fini",
		"deregister_tm_clones", "register_tm_clones",
		"__do_global_dtors_aux", "frame_dummy",
		"_dl_relocate_static_pie":
		return true
	}
	return false
}

// neverTrace reports whether a function must not be breakpointed whatever
// the filter says: the unsafe startup functions above, PLT stubs (named
// "foo@plt" by some tools: a breakpoint there would also fire for calls that
// are already counted at the real function's entry) and the cold parts GCC
// splits off a function ("f.cold", "f() [clone .cold]"), which are jumped
// to from the hot part, never called, so their "entry" has no return
// address.
func neverTrace(name string) bool {
	return unsafeFunction(name) ||
		strings.HasSuffix(name, "@plt") ||
		IsColdPart(name)
}

// IsColdPart tells a part GCC split off a function by its symbol's name.
func IsColdPart(name string) bool {
	return strings.HasSuffix(name, ".cold") ||
		strings.Contains(name, ".cold.") ||
		strings.Contains(name, "[clone .cold")
}
