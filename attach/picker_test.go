package attach

import (
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
