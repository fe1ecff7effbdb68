package attach

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/instrument"
)

// The cached choice of a module's functions is the filter's own: for a
// name an ifunc's implementation, as Resolved decides; for a library and
// a main program apart; and afresh once the filter is another
// (--auto-expand replaces it).
func TestPickerIsTheFilters(t *testing.T) {
	f, err := instrument.NewFilter([]string{"^(main|memcpy|parse)$"}, []string{"^__memcpy_sse2$"}, []string{"libc.so.6"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(Options{Filter: f})
	libc, prog := &instrument.Module{}, &instrument.Module{}
	chosen := map[string][]string{"__memcpy_avx": {"memcpy"}, "__memcpy_sse2": {"memcpy"}}
	cases := []struct {
		mod    *instrument.Module
		path   string
		isMain bool
		name   string
	}{
		{libc, "/lib/libc.so.6", false, "memcpy"},
		{libc, "/lib/libc.so.6", false, "__memcpy_avx"},
		{libc, "/lib/libc.so.6", false, "__memcpy_sse2"},
		{libc, "/lib/libc.so.6", false, "strlen"},
		{prog, "/bin/prog", true, "main"},
		{prog, "/bin/prog", true, "parse"},
		{prog, "/bin/prog", true, "helper"},
		{prog, "/bin/prog", false, "main"},
	}
	for round := 0; round < 2; round++ { // the second from the cache
		for _, c := range cases {
			got := e.picker(c.mod, c.isMain, chosen)(c.path, c.isMain, c.name)
			if want := f.Resolved(c.path, c.isMain, c.name, chosen[c.name]); got != want {
				t.Errorf("round %d: %s %s (main %v): %v, the filter says %v", round, c.path, c.name, c.isMain, got, want)
			}
		}
	}
	g, err := f.WithFunctions([]string{"prog:helper"})
	if err != nil {
		t.Fatal(err)
	}
	e.opt.Filter = g
	if !e.picker(prog, true, nil)("/bin/prog", true, "helper") {
		t.Error("helper, added to the filter, not picked")
	}
}

// pickedSymbols lists a module's picked symbols once per filter and ifunc
// choices: processes whose ifuncs chose alike share the list, another
// choice gets its own (memcpy's implementation is picked only when an
// ifunc chose it).
func TestPickedSymbolsByChoices(t *testing.T) {
	f, err := instrument.NewFilter([]string{"(^|:)(memcpy|strlen)$"}, nil, []string{"libc.so.6"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(Options{Filter: f})
	libc := &instrument.Module{Path: "/lib/libc.so.6", Symbols: []instrument.Symbol{
		{Name: "__memcpy_avx", Value: 0x100}, {Name: "__memcpy_sse2", Value: 0x200}, {Name: "strlen", Value: 0x300}}}
	cases := []struct {
		name   string
		chosen map[string][]string
		want   string
	}{
		{"no ifunc", nil, "strlen"},
		{"avx chosen", map[string][]string{"__memcpy_avx": {"memcpy"}}, "__memcpy_avx strlen"},
		{"sse2 chosen", map[string][]string{"__memcpy_sse2": {"memcpy"}}, "__memcpy_sse2 strlen"},
		{"no ifunc again", map[string][]string{}, "strlen"},
		{"avx again", map[string][]string{"__memcpy_avx": {"memcpy"}}, "__memcpy_avx strlen"},
	}
	for _, c := range cases {
		var got, oracle []string
		for _, s := range e.pickedSymbols(libc, false, c.chosen, e.picker(libc, false, c.chosen)) {
			got = append(got, s.Name)
		}
		for _, s := range libc.Symbols {
			if f.Resolved(libc.Path, false, s.Name, c.chosen[s.Name]) {
				oracle = append(oracle, s.Name)
			}
		}
		if g, o := strings.Join(got, " "), strings.Join(oracle, " "); g != o || g != c.want {
			t.Errorf("%s: picked %q, the filter picks %q, want %q", c.name, g, o, c.want)
		}
	}
}
