package instrument

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// splitDebug builds calls.c (with flags), splits its debug file off with
// objcopy and strips it, as distributions do. It returns the stripped
// file, its debug file and its build ID ("" when built without one).
func splitDebug(t *testing.T, flags ...string) (stripped, debug, id string) {
	t.Helper()
	if _, err := exec.LookPath("objcopy"); err != nil {
		t.Skip("objcopy not found (binutils)")
	}
	full := buildC(t, "calls.c", append([]string{"-g"}, flags...)...)
	dir := filepath.Dir(full)
	debug = filepath.Join(dir, "prog.debug")
	stripped = filepath.Join(dir, "stripped")
	for _, args := range [][]string{
		{"objcopy", "--only-keep-debug", full, debug},
		{"strip", "--strip-all", "-o", stripped, full},
		{"objcopy", "--add-gnu-debuglink=" + debug, stripped},
	} {
		if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	return stripped, debug, openModule(t, full).BuildID
}

// place links the file from at to (both in the test's temporary
// directories), making its directory.
func place(t *testing.T, from, to string) {
	t.Helper()
	if err := errors.Join(os.MkdirAll(filepath.Dir(to), 0o755), os.Link(from, to)); err != nil {
		t.Fatal(err)
	}
}

// Each route finds the debug file of a stripped executable, whose
// functions, known only there, then carry the stripped file's addresses
// and code; a debug file of another build is refused, said once.
func TestOpenWithDebugFile(t *testing.T) {
	stripped, debug, id := splitDebug(t)
	_, other, _ := splitDebug(t, "-DOTHER_BUILD", "-Wl,--build-id=0x0123456789abcdef")
	if _, err := Open(stripped); err == nil {
		t.Fatalf("Open(%s): the stripped file has symbols of its own", stripped)
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/buildid/"+id+"/debuginfo" {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, debug)
	}))
	defer server.Close()
	for _, tc := range []struct {
		name  string
		place func(root, exe string) // lays out debug files for exe under root
		infod bool
		from  string // "" when none is used
		warn  string
	}{
		{name: "build-id", from: FromBuildID, place: func(root, exe string) {
			place(t, debug, filepath.Join(root, ".build-id", id[:2], id[2:]+".debug"))
		}},
		{name: "debuglink beside", from: FromDebuglink, place: func(root, exe string) {
			place(t, debug, filepath.Join(filepath.Dir(exe), "prog.debug"))
		}},
		{name: "debuglink .debug", from: FromDebuglink, place: func(root, exe string) {
			place(t, debug, filepath.Join(filepath.Dir(exe), ".debug", "prog.debug"))
		}},
		{name: "debuglink global", from: FromDebuglink, place: func(root, exe string) {
			place(t, debug, filepath.Join(root, filepath.Dir(exe), "prog.debug"))
		}},
		{name: "debuginfod", from: FromDebuginfod, infod: true, place: func(string, string) {}},
		{name: "none", place: func(string, string) {}},
		{name: "other build", warn: "its build id 0123456789abcdef is not", place: func(root, exe string) {
			place(t, other, filepath.Join(root, ".build-id", id[:2], id[2:]+".debug"))
			place(t, other, filepath.Join(filepath.Dir(exe), "prog.debug"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, exe := t.TempDir(), filepath.Join(t.TempDir(), "app")
			place(t, stripped, exe)
			tc.place(root, exe)
			var mu sync.Mutex
			var warnings []string
			d := &DebugSearch{Dir: root, Warn: func(s string) {
				mu.Lock()
				defer mu.Unlock()
				warnings = append(warnings, s)
			}}
			if tc.infod {
				d.Debuginfod = NewDebuginfod(server.URL, filepath.Join(t.TempDir(), "cache"))
			}
			for range 2 { // refused once, said once
				m, err := OpenWith(exe, d)
				if tc.from == "" {
					if err == nil {
						t.Fatalf("OpenWith: symbols from %q, want none", m.SymbolsFrom)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%v (warnings %q)", err, warnings)
				}
				if !strings.HasPrefix(m.SymbolsFrom, tc.from+" ") || m.Dynamic || m.BuildID != id {
					t.Errorf("symbols from %q (dynamic %v, build id %s), want %s", m.SymbolsFrom, m.Dynamic, m.BuildID, tc.from)
				}
				// leaf is local to the executable: only .symtab names it.
				leaf := symbolNamed(t, m, "leaf")
				code, err := m.Code(leaf)
				if err != nil || len(code) == 0 || code[0] == 0 {
					t.Errorf("code of leaf: % x, %v: want the stripped file's bytes", code, err)
				}
			}
			want := 0
			if tc.warn != "" {
				want = 2 // the build-id file and the debuglink one, each once
			}
			if len(warnings) != want || (want > 0 && !strings.Contains(warnings[0], tc.warn)) {
				t.Errorf("warnings %q, want %d saying %q", warnings, want, tc.warn)
			}
		})
	}
}

// A file without a build ID is matched to its debuglink file by CRC.
func TestDebuglinkCRC(t *testing.T) {
	stripped, debug, id := splitDebug(t, "-Wl,--build-id=none")
	if id != "" {
		t.Fatalf("built with a build id %s", id)
	}
	exe := filepath.Join(t.TempDir(), "app")
	place(t, stripped, exe)
	place(t, debug, filepath.Join(filepath.Dir(exe), "prog.debug"))
	m, err := OpenWith(exe, &DebugSearch{Dir: t.TempDir()})
	if err != nil || !strings.HasPrefix(m.SymbolsFrom, FromDebuglink) {
		t.Fatalf("OpenWith: %v, symbols from %q", err, m.SymbolsFrom)
	}
	b, _ := os.ReadFile(debug)
	b[len(b)-1] ^= 1
	beside := filepath.Join(filepath.Dir(exe), "prog.debug")
	if err := errors.Join(os.Remove(beside), os.WriteFile(beside, b, 0o644)); err != nil {
		t.Fatal(err)
	}
	var warned []string
	if _, err := OpenWith(exe, &DebugSearch{Dir: t.TempDir(), Warn: func(s string) { warned = append(warned, s) }}); err == nil ||
		len(warned) != 1 || !strings.Contains(warned[0], "CRC") {
		t.Errorf("a changed debug file: %v, warnings %q; want refused for its CRC", err, warned)
	}
}

func TestDebuglinkPaths(t *testing.T) {
	for _, tc := range []struct {
		path, name string
		want       []string
	}{
		{"/usr/bin/app", "app.debug", []string{"/usr/bin/app.debug", "/usr/bin/.debug/app.debug", "/dbg/usr/bin/app.debug"}},
		// A debuglink naming the file itself is not looked for beside it.
		{"/opt/x/lib.so", "lib.so", []string{"/opt/x/.debug/lib.so", "/dbg/opt/x/lib.so"}},
	} {
		if got := debuglinkPaths("/dbg", tc.path, tc.name); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("debuglinkPaths(%s, %s) = %q, want %q", tc.path, tc.name, got, tc.want)
		}
	}
}

// The system C library, with Debian's libc6-dbg, gets its internal
// functions from the build-id directory.
func TestOpenWithLibcDebug(t *testing.T) {
	plain := openModule(t, libcPath)
	if !plain.Dynamic {
		t.Skipf("%s has a symbol table of its own", libcPath)
	}
	p := filepath.Join(DefaultDebugDir, ".build-id", plain.BuildID[:2], plain.BuildID[2:]+".debug")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no debug file for %s (apt-get install libc6-dbg): %v", libcPath, err)
	}
	m, err := OpenWith(libcPath, &DebugSearch{Dir: DefaultDebugDir})
	if err != nil {
		t.Fatal(err)
	}
	if m.SymbolsFrom != FromBuildID+" "+p || m.Dynamic {
		t.Errorf("symbols from %q (dynamic %v), want %s %s", m.SymbolsFrom, m.Dynamic, FromBuildID, p)
	}
	symbolNamed(t, m, "_int_malloc")
	found := false
	for _, name := range m.IFuncSlots {
		found = found || name == "memcpy"
	}
	if !found {
		t.Errorf("no IRELATIVE slot of memcpy in %v", m.IFuncSlots)
	}
}

// A debuginfod server that fails is said once; one that has no debug file
// for the module (404), the usual answer, is not worth saying.
func TestDebuginfodFailures(t *testing.T) {
	stripped, _, _ := splitDebug(t)
	exe := filepath.Join(t.TempDir(), "app") // no debug file beside it
	place(t, stripped, exe)
	for _, tc := range []struct {
		status int
		warned int
	}{{http.StatusNotFound, 0}, {http.StatusInternalServerError, 1}} {
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
		}))
		var warned []string
		d := &DebugSearch{Dir: t.TempDir(), Debuginfod: NewDebuginfod(server.URL+"/ ", t.TempDir()),
			Warn: func(s string) { warned = append(warned, s) }}
		for range 2 {
			if m, err := OpenWith(exe, d); err == nil {
				t.Errorf("status %d: symbols from %q", tc.status, m.SymbolsFrom)
			}
		}
		server.Close()
		if len(warned) != tc.warned || (tc.warned > 0 && !strings.Contains(warned[0], "500 Internal Server Error")) {
			t.Errorf("status %d: warnings %q, want %d", tc.status, warned, tc.warned)
		}
	}
}
