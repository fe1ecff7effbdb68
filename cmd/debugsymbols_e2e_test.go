package cmd_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// stripped lays out testdata's splitdebug-stripped as a distribution's
// binary in a directory of its own (so that no debug file is beside it
// unless a test puts one there) and returns its path and build ID.
func strippedSplitdebug(t *testing.T) (exe, id string) {
	t.Helper()
	exe = filepath.Join(t.TempDir(), "splitdebug")
	copyTo(t, wl(t, "splitdebug-stripped"), exe, 0o755)
	m, err := instrument.Open(wl(t, "splitdebug"))
	if err != nil {
		t.Fatal(err)
	}
	return exe, m.BuildID
}

func copyTo(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// buildIDPath is where a debug directory keeps the debug file of id.
func buildIDPath(dir, id string) string {
	return filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
}

// startDebuginfod serves the debug files in dir from a local debuginfod
// (stopped at the end of the test) and returns its URL once it serves
// the one of build ID id.
func startDebuginfod(t *testing.T, dir, id string) string {
	t.Helper()
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		t.Skip("debuginfod not installed (apt-get install debuginfod): its route is untested")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command(bin, "-F", dir, "-p", strconv.Itoa(port), "-d", filepath.Join(t.TempDir(), "db.sqlite"))
	var log strings.Builder
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	// It scans dir at start: wait until it has indexed the file.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(url + "/buildid/" + id + "/debuginfo")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
	}
	t.Fatalf("debuginfod on %s did not serve build id %s within 60s:\n%s", url, id, log.String())
	return ""
}

// A stripped executable whose debug file is split off is traced with the
// names and exact counts of its functions, static ones included (only
// the debug file names them), through each route to its debug file; info
// says which one.
func TestRecordSplitDebugRoutes(t *testing.T) {
	want, err := workload.LoadExpected("splitdebug")
	if err != nil {
		t.Fatal(err)
	}
	debug := wl(t, "splitdebug.debug")
	for _, tc := range []struct {
		name string
		// lay puts the debug file for exe (build ID id) where the route
		// looks; it returns the flags and environment, and where info
		// must say the symbols came from.
		lay func(t *testing.T, exe, id string) (flags, env []string, from string)
	}{
		{"build-id --debug-dir", func(t *testing.T, exe, id string) ([]string, []string, string) {
			root := t.TempDir()
			copyTo(t, debug, buildIDPath(root, id), 0o644)
			return []string{"--debug-dir", root}, nil, "build-id " + buildIDPath(root, id)
		}},
		{"build-id PROFILE_DEBUG_DIR", func(t *testing.T, exe, id string) ([]string, []string, string) {
			root := t.TempDir()
			copyTo(t, debug, buildIDPath(root, id), 0o644)
			return nil, []string{"PROFILE_DEBUG_DIR=" + root}, "build-id " + buildIDPath(root, id)
		}},
		{"debuglink", func(t *testing.T, exe, id string) ([]string, []string, string) {
			at := filepath.Join(filepath.Dir(exe), ".debug", "splitdebug.debug")
			copyTo(t, debug, at, 0o644)
			return []string{"--debug-dir", t.TempDir()}, nil, "debuglink " + at
		}},
		{"debuginfod", func(t *testing.T, exe, id string) ([]string, []string, string) {
			served := t.TempDir()
			copyTo(t, debug, filepath.Join(served, "splitdebug.debug"), 0o644)
			url := startDebuginfod(t, served, id)
			cache := t.TempDir()
			t.Cleanup(func() {
				if _, err := os.Stat(filepath.Join(cache, "profile", "debuginfod", id, "debuginfo")); err != nil {
					t.Errorf("the debug file is not in the cache: %v", err)
				}
			})
			return []string{"--debug-dir", t.TempDir()}, []string{"DEBUGINFOD_URLS=" + url, "XDG_CACHE_HOME=" + cache},
				"debuginfod " + url + "/buildid/" + id + "/debuginfo"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exe, id := strippedSplitdebug(t)
			flags, env, from := tc.lay(t, exe, id)
			dir := t.TempDir()
			args := append(append([]string{"record", "-o", "p.data"}, flags...), "--", exe)
			if _, stderr, code := runEnv(t, dir, env, args...); code != 0 || strings.Contains(stderr, "not used") {
				t.Fatalf("record: exit %d\n%s", code, stderr)
			}
			p, err := model.ReadFile(filepath.Join(dir, "p.data"))
			if err != nil {
				t.Fatal(err)
			}
			got := mainCounts(p)
			for f, c := range want.Functions {
				if got[f] != c {
					t.Errorf("%s: %+v, want %+v", f, got[f], c)
				}
			}
			if len(got) != len(want.Functions) {
				t.Errorf("functions %v, want %v", got, want.Functions)
			}
			out, _, _ := run(t, dir, "info", "p.data")
			line := exe + ": symbols from " + from
			if !regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(line) + `$`).MatchString(out) {
				t.Errorf("info does not say %q:\n%s", line, out)
			}
		})
	}
}

// A debug file of another build is never used: record says so once on
// stderr for each place it was found, and traces the executable as the
// stripped file it is.
func TestRecordRefusesOtherBuildsDebugFile(t *testing.T) {
	exe, id := strippedSplitdebug(t)
	other := wl(t, "recursion.debug")
	root := t.TempDir()
	copyTo(t, other, buildIDPath(root, id), 0o644)
	beside := filepath.Join(filepath.Dir(exe), "splitdebug.debug")
	copyTo(t, other, beside, 0o644)
	dir := t.TempDir()
	_, stderr, code := run(t, dir, "record", "-o", "p.data", "--debug-dir", root, "--", exe)
	if code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	for _, at := range []string{buildIDPath(root, id), beside} {
		re := regexp.MustCompile(`(?m)^profile: debug file ` + regexp.QuoteMeta(at) +
			` not used: its build id [0-9a-f]+ is not ` + regexp.QuoteMeta(exe) + `'s \(` + id + `\)$`)
		if n := len(re.FindAllString(stderr, -1)); n != 1 {
			t.Errorf("stderr says %d times that %s was refused, want once:\n%s", n, at, stderr)
		}
	}
	p, err := model.ReadFile(filepath.Join(dir, "p.data"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Meta.Warnings, "\n"), "splitdebug has no symbol table") {
		t.Errorf("the profile does not say the executable has no symbol table: %q", p.Meta.Warnings)
	}
	if got := mainCounts(p); len(got) != 0 {
		t.Errorf("functions of the executable traced with another build's names: %v", got)
	}
}

// With libc6-dbg installed, record --lib libc.so.6 counts libc's internal
// functions, which only its debug file names, and a filter naming memcpy
// selects the implementation its IFUNC chose: their calls are exactly the
// hits of gdb's breakpoints on them in the same workload, from the
// program's entry (where record's tracing starts) to its exit.
func TestRecordLibcDebugMatchesGDB(t *testing.T) {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		t.Skip("gdb not installed (apt-get install gdb): no oracle")
	}
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	m, err := instrument.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(buildIDPath(instrument.DefaultDebugDir, m.BuildID)); err != nil {
		t.Skipf("no debug file for %s (apt-get install libc6-dbg): %v", libc, err)
	}
	ifunc := wl(t, "ifunc")
	dir := t.TempDir()
	if _, stderr, code := runEnv(t, dir, []string{"PROFILE_DEBUG_DIR=", "DEBUGINFOD_URLS="}, "record", "-o", "p.data",
		"--lib", "libc.so.6", "--filter", `^libc\.so\.6:(_int_malloc|memcpy)$`, "--", ifunc); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	p, err := model.ReadFile(filepath.Join(dir, "p.data"))
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for _, th := range p.Threads {
		for _, n := range th.Nodes[1:] {
			fn := p.Functions[n.Func]
			if p.ModuleName(fn.Module) == "libc.so.6" {
				calls[fn.Name] += n.Calls
			}
		}
	}
	chosen := ""
	for name := range calls {
		if name != "_int_malloc" {
			chosen = name
		}
	}
	const copies = 200 // ifunc's calls of malloc and memcpy
	if len(calls) != 2 || calls["_int_malloc"] == 0 || chosen == "memcpy" || calls[chosen] < copies {
		t.Fatalf("libc's calls %v: want _int_malloc and memcpy's choice (at least %d calls)", calls, copies)
	}
	hits := gdbHits(t, gdb, ifunc, "_int_malloc", chosen)
	for _, name := range []string{"_int_malloc", chosen} {
		if calls[name] != hits[name] {
			t.Errorf("%s: %d calls, gdb's breakpoint hit %d times", name, calls[name], hits[name])
		}
	}
}

// gdbHits runs prog under gdb from its entry point to its exit with a
// breakpoint (hits counted, never stopping) on each function, and returns
// the hits.
func gdbHits(t *testing.T, gdb, prog string, funcs ...string) map[string]int64 {
	t.Helper()
	script := []string{
		"set pagination off", "set confirm off",
		"starti",
		// The program's entry, from the auxiliary vector once it is loaded.
		`python import re; gdb.execute("tbreak *" + re.search(r"AT_ENTRY\s.*\s(0x[0-9a-f]+)", gdb.execute("info auxv", to_string=True)).group(1))`,
		"continue",
	}
	for i, f := range funcs {
		script = append(script, "break "+f, fmt.Sprintf("ignore %d 100000000", i+2))
	}
	script = append(script, "continue", "info breakpoints")
	path := filepath.Join(t.TempDir(), "count.gdb")
	if err := os.WriteFile(path, []byte(strings.Join(script, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gdb, "-batch", "-nx", "-x", path, prog).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "exited normally") {
		t.Fatalf("gdb: the program did not run to its end:\n%s", out)
	}
	hits := map[string]int64{}
	re := regexp.MustCompile(`(?m)^\d+\s+breakpoint\s+keep\s+y\s+0x[0-9a-f]+ in (\S+) .*\n\s+breakpoint already hit (\d+) time`)
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		hits[m[1]] = n
	}
	for _, f := range funcs {
		if _, ok := hits[f]; !ok {
			t.Fatalf("gdb: no hit count for %s:\n%s", f, out)
		}
	}
	return hits
}

// discover reads a stripped executable's functions from its debug file
// too: step's callees, static functions only the debug file names.
func TestDiscoverSplitDebug(t *testing.T) {
	exe, id := strippedSplitdebug(t)
	root := t.TempDir()
	copyTo(t, wl(t, "splitdebug.debug"), buildIDPath(root, id), 0o644)
	doc := discoverJSON(t, t.TempDir(), "--exe", exe, "--debug-dir", root, "step")
	var got []string
	for _, c := range doc.Root.Callees {
		if c.Function != nil {
			got = append(got, c.Function.Key)
		}
	}
	if want := "splitdebug:leaf splitdebug:tenth"; strings.Join(got, " ") != want {
		t.Errorf("step's callees %q, want %s", got, want)
	}
	if _, stderr, code := run(t, t.TempDir(), "discover", "--exe", exe, "--debug-dir", t.TempDir(), "step"); code == 0 {
		t.Errorf("discover without the debug file found step:\n%s", stderr)
	}
}
