package instrument

import (
	"strings"
	"testing"
)

// FuzzNewFilter: NewFilter never panics on --filter, --exclude and --lib
// arguments (each string holds several, split at NUL), and a filter it
// builds never panics on module paths and function names. Module must be
// conservative: a module whose function is traced is never skipped.
func FuzzNewFilter(f *testing.F) {
	f.Add("^recursion:fib$\x00usleep", "", "", "/home/u/recursion", true, "fib")
	f.Add("", `^libc\.so`, "plugin", "/opt/app/libplugin.so.1", false, "plugin_run")
	f.Add("sleep", "", "", "/lib/x86_64-linux-gnu/libc.so.6", false, "usleep")
	f.Add("(bad", "[z-a]", "\x00", "", false, "")
	f.Add("", "", "/usr/lib/libz.so.1", "/usr/lib/../lib/libz.so.1", false, "f.cold")
	f.Fuzz(func(t *testing.T, include, exclude, libs, path string, isMain bool, name string) {
		flt, err := NewFilter(fuzzArgs(include), fuzzArgs(exclude), fuzzArgs(libs))
		if err != nil {
			if flt != nil {
				t.Fatalf("NewFilter returned a filter and %v", err)
			}
			return
		}
		module := flt.Module(path, isMain)
		if flt.Function(path, isMain, name) {
			if !module {
				t.Fatalf("Function(%q, %v, %q) but not Module", path, isMain, name)
			}
			if neverTrace(name) {
				t.Fatalf("Function(%q, %v, %q) traces a never-trace function", path, isMain, name)
			}
		}
	})
}

// fuzzArgs turns one fuzzed string into repeated flag values; "" is none.
func fuzzArgs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
