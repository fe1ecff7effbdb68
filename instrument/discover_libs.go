package instrument

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Discoverer disassembles the functions of a program: its executable and
// the libraries it loads, which define its imported functions.
type Discoverer struct {
	main     *Module
	mainName string       // base name of the executable as the kernel names it
	libs     []string     // library paths, in the dynamic linker's search order
	debug    *DebugSearch // stripped modules' debug files, nil: none
	mods     map[string]*Module
	modErrs  map[string]error
	exports  map[string]map[string]export // by module name
	observed *observedIndex
	warnings []string
	warned   map[string]bool
}

// export is a function a module's dynamic symbol table defines.
type export struct {
	value  uint64
	ifunc  bool
	hidden bool // a non-default version (name@VERSION)
}

// NewExeDiscoverer reads the executable at path and finds the libraries
// it needs as the dynamic linker would (DT_NEEDED, breadth first, through
// DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.conf and the default
// directories). Libraries it cannot find are left out, with a warning in
// each Discovery.
func NewExeDiscoverer(path string, debug *DebugSearch) (*Discoverer, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	d, err := newDiscoverer(real, filepath.Base(real), debug)
	if err != nil {
		return nil, err
	}
	libs, missing := neededLibraries(real, os.Getenv("LD_LIBRARY_PATH"))
	d.libs = libs
	for _, m := range missing {
		d.warnOnce("library "+m, fmt.Sprintf("library %s not found: its functions show as ?:name", m))
	}
	return d, nil
}

// NewPidDiscoverer reads the executable and the libraries process pid has
// mapped now (dlopen'ed ones included) from /proc/PID.
func NewPidDiscoverer(pid int, debug *DebugSearch) (*Discoverer, error) {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("discover: no process %d", pid)
	}
	exe, err := MainPath(pid)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	maps, err := ReadMaps(pid)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	// /proc/PID/exe opens the running file even if it was replaced since.
	d, err := newDiscoverer(fmt.Sprintf("/proc/%d/exe", pid), filepath.Base(strings.TrimSuffix(exe, deletedSuffix)), debug)
	if err != nil {
		return nil, err
	}
	for _, p := range LoadedPaths(maps) {
		if p != exe {
			d.libs = append(d.libs, p)
		}
	}
	return d, nil
}

func newDiscoverer(exe, name string, debug *DebugSearch) (*Discoverer, error) {
	m, err := OpenWith(exe, debug)
	var fe *elf.FormatError
	if errors.As(err, &fe) {
		return nil, fmt.Errorf("discover: %s is not an ELF executable: %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	return &Discoverer{main: m, mainName: name, debug: debug, mods: map[string]*Module{name: m},
		modErrs: map[string]error{}, exports: map[string]map[string]export{}, warned: map[string]bool{}}, nil
}

// moduleNames lists the modules in symbol search order: the executable,
// then the libraries.
func (d *Discoverer) moduleNames() []string {
	out := []string{d.mainName}
	for _, l := range d.libs {
		out = append(out, filepath.Base(l))
	}
	return out
}

// pathOf returns the file of the module called name.
func (d *Discoverer) pathOf(name string) (string, bool) {
	if name == d.mainName {
		return d.main.Path, true
	}
	for _, l := range d.libs {
		if filepath.Base(l) == name {
			return l, true
		}
	}
	return "", false
}

// module opens the module called name once.
func (d *Discoverer) module(name string) (*Module, error) {
	if m := d.mods[name]; m != nil {
		return m, nil
	}
	if err := d.modErrs[name]; err != nil {
		return nil, err
	}
	path, ok := d.pathOf(name)
	if !ok {
		return nil, fmt.Errorf("module %s is not loaded", name)
	}
	m, err := OpenWith(path, d.debug)
	if err != nil {
		d.modErrs[name] = err
		return nil, err
	}
	d.mods[name] = m
	return m, nil
}

// resolveImport finds the module that defines the imported function name,
// the first in search order whose dynamic symbol table defines it, as the
// dynamic linker binds it, and names it as the tracer does there.
func (d *Discoverer) resolveImport(name string) FuncRef {
	for _, mod := range d.moduleNames() {
		e, ok := d.exportsOf(mod)[name]
		if !ok {
			continue
		}
		ref := FuncRef{Module: mod, Name: name, Main: mod == d.mainName, Addr: e.value, IFunc: e.ifunc}
		if e.ifunc {
			return ref
		}
		if m, err := d.module(mod); err == nil {
			if s, ok := m.Lookup(e.value); ok && s.Value == e.value {
				ref.Name, ref.Size = s.Name, s.Size // the name aliases collapse to
			}
		}
		return ref
	}
	return FuncRef{Name: name}
}

// exportsOf reads the functions module mod exports, once.
func (d *Discoverer) exportsOf(mod string) map[string]export {
	if e, ok := d.exports[mod]; ok {
		return e
	}
	out := map[string]export{}
	d.exports[mod] = out
	path, ok := d.pathOf(mod)
	if !ok {
		return out
	}
	f, err := elf.Open(path)
	if err != nil {
		d.warnOnce("open "+mod, fmt.Sprintf("%s: %v", mod, err))
		return out
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		d.warnOnce("open "+mod, fmt.Sprintf("%s: %v", mod, err))
	}
	for _, s := range syms {
		typ, bind := elf.ST_TYPE(s.Info), elf.ST_BIND(s.Info)
		if !defined(s) || (typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC) || bind == elf.STB_LOCAL {
			continue
		}
		e := export{value: s.Value, ifunc: typ == elf.STT_GNU_IFUNC, hidden: s.HasVersion && s.VersionIndex.IsHidden()}
		// The default version wins: it is what a new link binds to.
		if prev, ok := out[s.Name]; ok && !prev.hidden {
			continue
		}
		out[s.Name] = e
	}
	return out
}

func (d *Discoverer) warnOnce(key, msg string) {
	if d.warned[key] {
		return
	}
	d.warned[key] = true
	d.warnings = append(d.warnings, msg)
}

// defaultLibDirs are where the dynamic linker looks last on x86-64
// (Debian's multiarch directories first, then the FHS ones).
var defaultLibDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib",
}

// neededLibraries returns the paths of the libraries exe loads at start,
// breadth first as the dynamic linker loads them, and the names it could
// not find.
func neededLibraries(exe, ldLibraryPath string) (found, missing []string) {
	conf := ldSoConfDirs("/etc/ld.so.conf", 0)
	seen := map[string]bool{}
	type loader struct {
		path  string
		rpath []string // DT_RPATH of the executable, kept down the chain
	}
	queue := []loader{{path: exe}}
	for ; len(queue) > 0; queue = queue[1:] {
		l := queue[0]
		needed, rpath, runpath := dynamicOf(l.path)
		origin := filepath.Dir(l.path)
		if len(runpath) > 0 {
			rpath = nil // RUNPATH disables RPATH (of this object)
		}
		var dirs []string
		dirs = append(dirs, expandOrigin(rpath, origin)...)
		dirs = append(dirs, expandOrigin(l.rpath, origin)...)
		dirs = append(dirs, filepath.SplitList(ldLibraryPath)...)
		dirs = append(dirs, expandOrigin(runpath, origin)...)
		dirs = append(dirs, conf...)
		dirs = append(dirs, defaultLibDirs...)
		for _, name := range needed {
			if seen[name] {
				continue
			}
			seen[name] = true
			p, ok := findLibrary(name, dirs)
			if !ok {
				missing = append(missing, name)
				continue
			}
			found = append(found, p)
			queue = append(queue, loader{path: p, rpath: append(l.rpath, expandOrigin(rpath, origin)...)})
		}
	}
	return found, missing
}

// dynamicOf reads an ELF file's DT_NEEDED, DT_RPATH and DT_RUNPATH.
func dynamicOf(path string) (needed, rpath, runpath []string) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil, nil
	}
	defer f.Close()
	needed, _ = f.DynString(elf.DT_NEEDED)
	split := func(tag elf.DynTag) []string {
		vals, _ := f.DynString(tag)
		var out []string
		for _, v := range vals {
			out = append(out, filepath.SplitList(v)...)
		}
		return out
	}
	return needed, split(elf.DT_RPATH), split(elf.DT_RUNPATH)
}

// expandOrigin substitutes $ORIGIN (the loading object's directory).
func expandOrigin(dirs []string, origin string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		d = strings.ReplaceAll(d, "${ORIGIN}", origin)
		out = append(out, strings.ReplaceAll(d, "$ORIGIN", origin))
	}
	return out
}

// findLibrary looks for the library name (a path if it has a slash) in
// dirs: the first x86-64 ELF file of that name, symlinks resolved (the
// kernel names the file so in /proc/PID/maps, which the tracer reads).
func findLibrary(name string, dirs []string) (string, bool) {
	cands := []string{name}
	if !strings.Contains(name, "/") {
		cands = cands[:0]
		for _, d := range dirs {
			if d != "" {
				cands = append(cands, filepath.Join(d, name))
			}
		}
	}
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		if f, err := elf.Open(real); err == nil {
			ok := f.Class == elf.ELFCLASS64 && f.Machine == elf.EM_X86_64
			f.Close()
			if ok {
				return real, true
			}
		}
	}
	return "", false
}

// ldSoConfDirs reads the directories of an ld.so.conf file and the files
// it includes (glob patterns, relative to its directory).
func ldSoConfDirs(path string, depth int) []string {
	data, err := os.ReadFile(path)
	if err != nil || depth > 8 {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || f[0] == "hwcap":
		case f[0] == "include":
			for _, pat := range f[1:] {
				if !filepath.IsAbs(pat) {
					pat = filepath.Join(filepath.Dir(path), pat)
				}
				files, _ := filepath.Glob(pat)
				for _, inc := range files {
					out = append(out, ldSoConfDirs(inc, depth+1)...)
				}
			}
		default:
			out = append(out, f...)
		}
	}
	return out
}
