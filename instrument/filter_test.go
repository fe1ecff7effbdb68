package instrument

import (
	"sort"
	"strings"
	"testing"
)

func TestDefaultBlockingSorted(t *testing.T) {
	if !sort.StringsAreSorted(defaultBlocking) {
		t.Errorf("defaultBlocking is not sorted")
	}
	for i := 1; i < len(defaultBlocking); i++ {
		if defaultBlocking[i] == defaultBlocking[i-1] {
			t.Errorf("duplicate %q", defaultBlocking[i])
		}
	}
	got := DefaultBlocking()
	got[0] = "changed"
	if defaultBlocking[0] == "changed" {
		t.Errorf("DefaultBlocking returned the package's own slice")
	}
}

func TestFilterFunction(t *testing.T) {
	const (
		exe   = "/home/u/recursion"
		libc  = "/usr/lib/x86_64-linux-gnu/libc.so.6"
		plug  = "/opt/app/libplugin.so.1"
		other = "/usr/lib/libz.so.1"
	)
	type call struct {
		path   string
		isMain bool
		name   string
		want   bool
	}
	tests := []struct {
		name                   string
		include, exclude, libs []string
		calls                  []call
	}{
		{"default", nil, nil, nil, []call{
			{exe, true, "fib", true},
			{exe, true, "ns::f(int)", true},
			{libc, false, "usleep", true},
			{libc, false, "pthread_cond_wait", true},
			{libc, false, "malloc", false},
			{other, false, "inflate", false},
			{other, false, "read", false}, // blocking names only count in the C library
			{plug, false, "plugin_run", false},
			{exe, true, "_start", false},
			{exe, true, "frame_dummy", false},
			{exe, true, "_init", false},
			{exe, true, "main.cold", false},
			{exe, true, "f(int) [clone .cold]", false},
			{exe, true, "f.part.0", true},
			{exe, true, "puts@plt", false},
		}},
		{"include", []string{"^recursion:fib$", "usleep"}, nil, nil, []call{
			{exe, true, "fib", true},
			{exe, true, "main", false},
			{libc, false, "usleep", true},
			{libc, false, "nanosleep", false},
			{libc, false, "malloc", false}, // matches nothing and is no candidate
		}},
		{"include needs a candidate", []string{"malloc"}, nil, nil, []call{
			{libc, false, "malloc", false},
		}},
		{"exclude", nil, []string{`^recursion:fi`, `libc\.so\.6:(read|write)$`}, nil, []call{
			{exe, true, "fib", false},
			{exe, true, "main", true},
			{libc, false, "read", false},
			{libc, false, "readv", true},
			{libc, false, "usleep", true},
		}},
		{"lib", nil, nil, []string{"plugin"}, []call{
			{plug, false, "plugin_run", true},
			{plug, false, "_fini", false},
			{other, false, "inflate", false},
		}},
		{"lib by path", nil, nil, []string{plug}, []call{
			{plug, false, "plugin_run", true},
			{"/elsewhere/libplugin.so.1", false, "plugin_run", false},
		}},
		{"lib with include", []string{"libplugin.so.1:plugin_"}, nil, []string{"libplugin.so"}, []call{
			{plug, false, "plugin_run", true},
			{plug, false, "helper", false},
			{exe, true, "main", false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFilter(tt.include, tt.exclude, tt.libs)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.calls {
				if got := f.Function(c.path, c.isMain, c.name); got != c.want {
					t.Errorf("Function(%s, %v, %q) = %v, want %v", c.path, c.isMain, c.name, got, c.want)
				}
			}
		})
	}
}

func TestFilterModule(t *testing.T) {
	tests := []struct {
		name                   string
		include, exclude, libs []string
		path                   string
		isMain                 bool
		want                   bool
	}{
		{"main", nil, nil, nil, "/bin/prog", true, true},
		{"libc", nil, nil, nil, "/lib/x86_64-linux-gnu/libc.so.6", false, true},
		{"old libpthread", nil, nil, nil, "/lib/libpthread-2.31.so", false, true},
		{"musl", nil, nil, nil, "/lib/ld-musl-x86_64.so.1", false, true},
		{"ld.so", nil, nil, nil, "/lib64/ld-linux-x86-64.so.2", false, false},
		{"other", nil, nil, nil, "/usr/lib/libz.so.1", false, false},
		{"libcrypto is not libc", nil, nil, nil, "/usr/lib/libcrypto.so.3", false, false},
		{"lib", nil, nil, []string{"libz"}, "/usr/lib/libz.so.1", false, true},
		{"include misses libc", []string{"^prog:"}, nil, nil, "/lib/libc.so.6", false, false},
		{"include hits libc", []string{"sleep"}, nil, nil, "/lib/libc.so.6", false, true},
		{"libc excluded", nil, []string{`^libc\.so`}, nil, "/lib/libc.so.6", false, false},
	}
	for _, tt := range tests {
		f, err := NewFilter(tt.include, tt.exclude, tt.libs)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Module(tt.path, tt.isMain); got != tt.want {
			t.Errorf("%s: Module(%s) = %v, want %v", tt.name, tt.path, got, tt.want)
		}
	}
}

func TestNewFilterErrors(t *testing.T) {
	tests := []struct {
		include, exclude, libs []string
		want                   string
	}{
		{[]string{"ok", "(bad"}, nil, nil, `--filter "(bad"`},
		{nil, []string{"[z-a]"}, nil, `--exclude "[z-a]"`},
		{nil, nil, []string{""}, "--lib"},
	}
	for _, tt := range tests {
		_, err := NewFilter(tt.include, tt.exclude, tt.libs)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewFilter(%q, %q, %q) = %v, want an error containing %s", tt.include, tt.exclude, tt.libs, err, tt.want)
		}
	}
}

// Extra functions are selected exactly, in any module, on top of the
// include patterns; exclude patterns and the unsafe functions still win.
func TestFilterWithFunctions(t *testing.T) {
	const (
		exe  = "/home/u/callees"
		libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
		libz = "/usr/lib/libz.so.1"
	)
	base, err := NewFilter([]string{`^callees:(A|C)$`}, []string{`:secret$`, `^libc\.so\.6:write$`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := base.WithFunctions([]string{"callees:x", "libc.so.6:puts", "libz.so.1:inflate", "libc.so.6:write", "callees:secret", "callees:_start", "callees:ns::f(int)"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		isMain bool
		name   string
		want   bool
	}{
		{exe, true, "A", true},                       // the include pattern
		{exe, true, "x", true},                       // extra
		{exe, true, "y", false},                      // neither
		{exe, true, "ns::f(int)", true},              // the first colon ends the module
		{exe, true, "secret", false},                 // excluded
		{exe, true, "_start", false},                 // never traced
		{libc, false, "puts", true},                  // extra in a library
		{libc, false, "write", false},                // excluded
		{libc, false, "usleep", false},               // blocking, but not included
		{libz, false, "inflate", true},               // extra in a library that is no candidate
		{libz, false, "deflate", false},              // its other functions are not
		{"/other/libz.so.1", false, "inflate", true}, // by base name, as --filter
	} {
		if got := f.Function(c.path, c.isMain, c.name); got != c.want {
			t.Errorf("Function(%s, %q) = %v, want %v", c.path, c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		path string
		want bool
	}{{libz, true}, {libc, true}, {"/usr/lib/libssl.so.3", false}} {
		if got := f.Module(c.path, false); got != c.want {
			t.Errorf("Module(%s) = %v, want %v", c.path, got, c.want)
		}
	}
	if base.Module(libz, false) || base.Function(exe, true, "x") {
		t.Errorf("WithFunctions changed the filter it was called on")
	}
	for _, bad := range []string{"puts", ":puts", "libc.so.6:"} {
		if _, err := base.WithFunctions([]string{bad}); err == nil {
			t.Errorf("WithFunctions(%q): no error", bad)
		}
	}
}

// A function an IFUNC resolved to is selected under its own name or the
// IFUNC's, and an exclude pattern naming it still drops it.
func TestFilterResolved(t *testing.T) {
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	target := "__memmove_avx_unaligned_erms"
	for _, tc := range []struct {
		name             string
		include, exclude []string
		ifuncs           []string
		want             bool
	}{
		{"the IFUNC's name", []string{"^libc.so.6:memcpy$"}, nil, []string{"memcpy", "memmove"}, true},
		{"its own name", []string{"memmove_avx"}, nil, nil, true},
		{"neither", []string{"^libc.so.6:strlen$"}, nil, []string{"memcpy"}, false},
		{"no IFUNC chose it", []string{"^libc.so.6:memcpy$"}, nil, nil, false},
		{"excluded by its own name", []string{"memcpy"}, []string{"avx_unaligned"}, []string{"memcpy"}, false},
		{"the IFUNC excluded", []string{"libc"}, []string{":memcpy$"}, []string{"memcpy"}, true},
	} {
		f, err := NewFilter(tc.include, tc.exclude, []string{"libc.so.6"})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Resolved(libc, false, target, tc.ifuncs); got != tc.want {
			t.Errorf("%s: Resolved = %v, want %v", tc.name, got, tc.want)
		}
	}
}
