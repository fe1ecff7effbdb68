package instrument

import (
	"debug/elf"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"
)

// readSymbols returns the function symbols of f, one per address and sorted
// by address, from .symtab when it has any, else from .dynsym. It also
// returns the IFUNC symbols of both tables by address: their values are
// resolver addresses, which name the targets of R_X86_64_IRELATIVE PLT slots.
//
// IFUNC symbols are not functions themselves: a breakpoint on the resolver
// would fire once at relocation time, and the selected implementation (for
// example __memcpy_avx_unaligned) has its own symbol when the file is not
// stripped. So they are left out of the function list.
func readSymbols(f *elf.File) (syms []Symbol, ifuncs map[uint64]string, dynamicOnly bool, err error) {
	static, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, nil, false, fmt.Errorf("read .symtab: %w", err)
	}
	dynamic, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, nil, false, fmt.Errorf("read .dynsym: %w", err)
	}
	ifuncs = make(map[uint64]string)
	addIFuncs(ifuncs, dynamic)
	addIFuncs(ifuncs, static)
	syms = collapse(functions(static))
	if len(syms) == 0 {
		syms, dynamicOnly = collapse(functions(dynamic)), true
	}
	return syms, ifuncs, dynamicOnly, nil
}

// readDebugSymbols returns the function symbols of a separate debug
// file's .symtab, and its IFUNC symbols by address (readSymbols). Its
// .dynsym is not read: the debug file keeps it as NOBITS.
func readDebugSymbols(f *elf.File) ([]Symbol, map[uint64]string, error) {
	static, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, nil, fmt.Errorf("read .symtab: %w", err)
	}
	ifuncs := make(map[uint64]string)
	addIFuncs(ifuncs, static)
	return collapse(functions(static)), ifuncs, nil
}

// addIFuncs adds the defined IFUNC symbols of table to ifuncs, by value.
func addIFuncs(ifuncs map[uint64]string, table []elf.Symbol) {
	for _, s := range table {
		if elf.ST_TYPE(s.Info) == elf.STT_GNU_IFUNC && defined(s) {
			ifuncs[s.Value] = unversioned(s.Name)
		}
	}
}

func defined(s elf.Symbol) bool {
	return s.Value != 0 && s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE
}

// unversioned drops the version a .symtab name carries for a symbol
// defined with .symver ("memcpy@@GLIBC_2.14", a debug file's libc): the
// function is named as .dynsym names it, where the version is apart.
func unversioned(name string) string {
	if i := strings.IndexByte(name, '@'); i > 0 {
		return name[:i]
	}
	return name
}

// candidate is a function symbol before aliases are collapsed.
type candidate struct {
	Symbol
	bind elf.SymBind
}

func functions(table []elf.Symbol) []candidate {
	var out []candidate
	for _, s := range table {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || !defined(s) {
			continue
		}
		raw := unversioned(s.Name)
		out = append(out, candidate{
			Symbol: Symbol{Raw: raw, Value: s.Value, Size: s.Size},
			bind:   elf.ST_BIND(s.Info),
		})
	}
	demangleAll(out)
	return out
}

// demangleAll names each candidate by its raw name demangled, on every
// CPU for a large table: demangling is most of reading a C++ program's
// symbols (gcc's cc1: 26,000 of them, some 80 ms), on the way to tracing
// each process that execs it.
func demangleAll(cs []candidate) {
	workers := runtime.GOMAXPROCS(0)
	if len(cs) < 4096 || workers < 2 {
		workers = 1
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(cs); i += workers {
				cs[i].Name = demangle.Filter(cs[i].Raw)
			}
		})
	}
	wg.Wait()
}

// collapse keeps one symbol per address. Aliases are common (glibc exports
// read, __read and __libc_read at one address) and a profile must name each
// function once, the same way every run, so the choice is a total order:
// a symbol with a size beats one without (size-0 symbols are labels unless
// nothing else is there), then a name without a leading underscore (the
// public name), then GLOBAL over WEAK over LOCAL, then the shorter name,
// then the lexicographically smaller one.
func collapse(cs []candidate) []Symbol {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Value != cs[j].Value {
			return cs[i].Value < cs[j].Value
		}
		return better(cs[i], cs[j])
	})
	var out []Symbol
	for i, c := range cs {
		if i > 0 && cs[i-1].Value == c.Value {
			continue
		}
		out = append(out, c.Symbol)
	}
	return out
}

// better reports whether a is preferred over b as the name of their address.
func better(a, b candidate) bool {
	if (a.Size > 0) != (b.Size > 0) {
		return a.Size > 0
	}
	ua, ub := strings.HasPrefix(a.Name, "_"), strings.HasPrefix(b.Name, "_")
	if ua != ub {
		return !ua
	}
	if ra, rb := bindRank(a.bind), bindRank(b.bind); ra != rb {
		return ra < rb
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) < len(b.Name)
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Raw < b.Raw
}

// stbGNUUnique is STB_GNU_UNIQUE, which debug/elf does not name.
const stbGNUUnique elf.SymBind = 10

func bindRank(b elf.SymBind) int {
	switch b {
	case elf.STB_GLOBAL, stbGNUUnique:
		return 0
	case elf.STB_WEAK:
		return 1
	default:
		return 2
	}
}
