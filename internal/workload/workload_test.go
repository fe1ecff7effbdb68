package workload

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/ianlancetaylor/demangle"
)

// selfChecked lists the workloads whose --selfcheck report must equal their
// expected file.  crash has an expected file but cannot report (it dies).
var selfChecked = []string{
	"recursion", "mutual", "threads", "forks", "exec_target", "blocking",
	"unusual", "dlopen", "demo", "altstack", "many", "sigalrm",
	"exceptions", "threads64", "inflight", "unpatchable", "difftarget",
	"wide", "pool", "trapcost", "mixed", "hottrap", "vcall", "sites", "holdentry",
	"splitdebug", "ifunc", "coldparts",
}

func mustBuild(t *testing.T) {
	t.Helper()
	if err := Build(); err != nil {
		t.Fatal(err)
	}
}

func TestDir(t *testing.T) {
	for _, f := range []string{"Makefile", "README.md", "src/selfcheck.h"} {
		if _, err := os.Stat(filepath.Join(Dir(), f)); err != nil {
			t.Errorf("testdata: %v", err)
		}
	}
	if !filepath.IsAbs(Dir()) {
		t.Errorf("Dir() = %q, not absolute", Dir())
	}
}

// Every expected file is covered by a test.
func TestNames(t *testing.T) {
	names, err := Names()
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]string{}, selfChecked...), "crash")
	sort.Strings(want)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("Names() = %v, want %v (update selfChecked when adding a workload)", names, want)
	}
}

func TestLoadExpected(t *testing.T) {
	names, err := Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		e, err := LoadExpected(name)
		if err != nil {
			t.Errorf("LoadExpected(%q): %v", name, err)
			continue
		}
		if len(e.Functions) == 0 {
			t.Errorf("%s: no functions", name)
		}
		if c := e.Functions["main"]; c.Calls != 1 || c.RecursiveCalls != 0 {
			t.Errorf("%s: main = %+v, want 1 call", name, c)
		}
		for f, c := range e.Functions {
			if c.Calls == 0 || c.RecursiveCalls >= c.Calls {
				t.Errorf("%s: %s: implausible counts %+v", name, f, c)
			}
		}
	}
	if _, err := LoadExpected("no-such-workload"); err == nil {
		t.Error("LoadExpected(no-such-workload) succeeded")
	}
}

func diffExpected(want, got *Expected) []string {
	var diffs []string
	keys := map[string]bool{}
	for k := range want.Functions {
		keys[k] = true
	}
	for k := range got.Functions {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, wok := want.Functions[k]
		g, gok := got.Functions[k]
		switch {
		case !wok:
			diffs = append(diffs, fmt.Sprintf("unexpected function %q: %+v", k, g))
		case !gok:
			diffs = append(diffs, fmt.Sprintf("missing function %q (want %+v)", k, w))
		case w != g:
			diffs = append(diffs, fmt.Sprintf("function %q: got %+v, want %+v", k, g, w))
		}
	}
	if !reflect.DeepEqual(want.Threads, got.Threads) {
		diffs = append(diffs, fmt.Sprintf("threads:\n got  %+v\n want %+v", got.Threads, want.Threads))
	}
	if !reflect.DeepEqual(want.Processes, got.Processes) {
		diffs = append(diffs, fmt.Sprintf("processes:\n got  %+v\n want %+v", got.Processes, want.Processes))
	}
	if want.ExitCode != got.ExitCode {
		diffs = append(diffs, fmt.Sprintf("exit code %d, want %d", got.ExitCode, want.ExitCode))
	}
	if !reflect.DeepEqual(want.Args, got.Args) {
		diffs = append(diffs, fmt.Sprintf("args %q, want %q", got.Args, want.Args))
	}
	if want.Workload != got.Workload {
		diffs = append(diffs, fmt.Sprintf("workload %q, want %q", got.Workload, want.Workload))
	}
	return diffs
}

func TestSelfCheckMatchesExpected(t *testing.T) {
	mustBuild(t)
	for _, name := range selfChecked {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := LoadExpected(name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := SelfCheck(name, want.Args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffExpected(want, got) {
				t.Error(d)
			}
		})
	}
}

// The self-check itself can tell apart runs that differ.
func TestSelfCheckDetectsDifferences(t *testing.T) {
	mustBuild(t)
	want, err := LoadExpected("recursion")
	if err != nil {
		t.Fatal(err)
	}
	got, err := SelfCheck("recursion", "7")
	if err != nil {
		t.Fatal(err)
	}
	if len(diffExpected(want, got)) == 0 {
		t.Fatal("self-check of recursion 7 equals the expected default run")
	}
	if c := got.Functions["rec"]; c != (Counts{Calls: 70, RecursiveCalls: 63}) {
		t.Errorf("recursion 7: rec = %+v, want 70 calls, 63 recursive", c)
	}
}

// run runs a workload without flags in a scratch directory.
func run(t *testing.T, name string, args ...string) (stdout []byte, state *os.ProcessState) {
	t.Helper()
	bin, err := Path(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("%s: %v", name, err)
	}
	if errb.Len() > 0 {
		t.Logf("%s stderr:\n%s", name, errb.Bytes())
	}
	return out.Bytes(), cmd.ProcessState
}

func TestUntracedExitCode(t *testing.T) {
	mustBuild(t)
	names, err := Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := LoadExpected(name)
			if err != nil {
				t.Fatal(err)
			}
			_, st := run(t, name, want.Args...)
			if got := st.ExitCode(); got != want.ExitCode {
				t.Errorf("exit code %d, want %d (%v)", got, want.ExitCode, st)
			}
			sig := ""
			if ws := st.Sys().(syscall.WaitStatus); ws.Signaled() {
				sig = signalName(ws.Signal())
			}
			if sig != want.Signal {
				t.Errorf("signal %q, want %q", sig, want.Signal)
			}
		})
	}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGILL:
		return "SIGILL"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTRAP:
		return "SIGTRAP"
	}
	return fmt.Sprintf("signal %d", int(s))
}

func TestCrash(t *testing.T) {
	mustBuild(t)
	out, st := run(t, "crash")
	ws := st.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGSEGV {
		t.Fatalf("crash: %v, want death by SIGSEGV", st)
	}
	if !bytes.Contains(out, []byte("crashing now")) {
		t.Errorf("crash stdout = %q", out)
	}
}

func TestLongrunChecksum(t *testing.T) {
	mustBuild(t)
	t.Parallel()
	args := []string{"--threads", "4", "--seconds", "2"}
	type result struct {
		out  []byte
		code int
	}
	results := make(chan result, 2)
	for i := 0; i < 2; i++ {
		go func() {
			bin, _ := Path("longrun")
			cmd := exec.Command(bin, args...)
			cmd.Stderr = os.Stderr
			out, _ := cmd.Output()
			results <- result{out, cmd.ProcessState.ExitCode()}
		}()
	}
	re := regexp.MustCompile(`^checksum=[0-9a-f]{16}\n$`)
	var outs []string
	for i := 0; i < 2; i++ {
		r := <-results
		if r.code != 0 {
			t.Errorf("longrun %v: exit code %d", args, r.code)
		}
		if !re.Match(r.out) {
			t.Errorf("longrun %v: stdout %q, want one checksum=<16 hex digits> line", args, r.out)
		}
		outs = append(outs, string(r.out))
	}
	if outs[0] != outs[1] {
		t.Errorf("longrun %v: checksums differ: %q, %q", args, outs[0], outs[1])
	}
}

func TestLongrunSelfCheck(t *testing.T) {
	mustBuild(t)
	t.Parallel()
	got, err := SelfCheck("longrun", "--threads=2", "--seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ExitCode != 0 {
		t.Errorf("exit code %d", got.ExitCode)
	}
	wantThreads := []ThreadGroup{{SpawnedBy: "spawn_all", NestingLevel: 1, Count: 3}}
	if !reflect.DeepEqual(got.Threads, wantThreads) {
		t.Errorf("threads %+v, want %+v", got.Threads, wantThreads)
	}
	exact := map[string]Counts{
		"main": {1, 0}, "spawn_all": {1, 0}, "compute_thread": {2, 0},
		"sleeper_thread": {1, 0}, "sleeper": {1, 0},
	}
	for f, c := range exact {
		if got.Functions[f] != c {
			t.Errorf("%s = %+v, want %+v", f, got.Functions[f], c)
		}
	}
	rounds := got.Functions["compute_round"].Calls
	if rounds < 2 || got.Functions["lr_mix"].Calls != 8*rounds || got.Functions["lr_fib"].RecursiveCalls == 0 {
		t.Errorf("implausible compute counts: %+v", got.Functions)
	}
}

func TestLongrunBadArgs(t *testing.T) {
	mustBuild(t)
	for _, args := range [][]string{{"--threads"}, {"--threads", "0"}, {"--seconds", "x"}, {"extra"}} {
		if _, st := run(t, "longrun", args...); st.ExitCode() != 2 {
			t.Errorf("longrun %q: exit code %d, want 2", args, st.ExitCode())
		}
	}
}

// The server workload (exercised by internal/loadgen and the stress suite)
// refuses bad arguments, and --seconds ends it with status 0 and a report.
func TestServerArgsAndSafetyNet(t *testing.T) {
	mustBuild(t)
	for _, args := range [][]string{{"--threads", "0"}, {"--port", "70000"}, {"--seconds", "x"}, {"extra"}} {
		if _, st := run(t, "server", args...); st.ExitCode() != 2 {
			t.Errorf("server %q: exit code %d, want 2", args, st.ExitCode())
		}
	}
	out, st := run(t, "server", "--seconds", "1", "--threads", "2")
	if st.ExitCode() != 0 || !regexp.MustCompile(`^port=\d+\nrequests=0\n(counter \w+ \d+ \d+\n)+$`).Match(out) ||
		!bytes.Contains(out, []byte("\ncounter worker_thread 2 0\n")) {
		t.Errorf("server --seconds 1: exit %d, stdout %q", st.ExitCode(), out)
	}
}

func TestRecursionScales(t *testing.T) {
	mustBuild(t)
	out, st := run(t, "recursion", "1000")
	if st.ExitCode() != 0 || !bytes.Contains(out, []byte("iterations=1000 ")) {
		t.Errorf("recursion 1000: exit %d, stdout %q", st.ExitCode(), out)
	}
}

// openWorkload opens a built workload's ELF file, closed when t ends.
func openWorkload(t *testing.T, name string) (*elf.File, string) {
	t.Helper()
	bin, err := Path(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, bin
}

func TestStripped(t *testing.T) {
	f, bin := openWorkload(t, "stripped")
	if s := f.Section(".symtab"); s != nil {
		t.Errorf("%s has a .symtab", bin)
	}
	if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
		t.Errorf("%s: Symbols() error = %v, want ErrNoSymbols", bin, err)
	}
	// It is still the recursion program.
	out, st := run(t, "stripped")
	if st.ExitCode() != 0 || !bytes.HasPrefix(out, []byte("recursion: iterations=100 ")) {
		t.Errorf("stripped: exit %d, stdout %q", st.ExitCode(), out)
	}
}

// crtFuncs are the compiler/CRT functions that are not part of any
// workload's expected functions.
var crtFuncs = map[string]bool{
	"_start": true, "_init": true, "_fini": true, "frame_dummy": true,
	"__libc_csu_init": true, "__libc_csu_fini": true,
	"deregister_tm_clones": true, "register_tm_clones": true,
	"__do_global_dtors_aux": true, "_dl_relocate_static_pie": true,
}

// programFuncs returns the demangled names of the functions a binary
// defines, without the CRT ones.
func programFuncs(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Type != elf.ET_DYN {
		t.Errorf("%s: ELF type %v, want ET_DYN (PIE or shared object)", path, f.Type)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if f.Section(".debug_info") == nil {
		t.Errorf("%s: no debug info", path)
	}
	funcs := map[string]bool{}
	for _, s := range syms {
		// GCC's split-off parts ("f.cold", coldparts) are parts of f.
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || crtFuncs[s.Name] || strings.HasSuffix(s.Name, ".cold") {
			continue
		}
		name := s.Name
		if d, err := demangle.ToString(name); err == nil {
			name = d
		}
		funcs[name] = true
	}
	return funcs
}

// The functions each binary defines are exactly those its expected file
// lists: no helper, clone (.isra, .constprop, .part), .cold part or merged
// function that the profiler would see and the expected file would not.
func TestBinarySymbolsMatchExpected(t *testing.T) {
	mustBuild(t)
	names, err := Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want, err := LoadExpected(name)
			if err != nil {
				t.Fatal(err)
			}
			modules := map[string]map[string]bool{}
			for k := range want.Functions {
				mod, sym := SplitKey(k)
				if mod == "" {
					mod = name
				}
				if modules[mod] == nil {
					modules[mod] = map[string]bool{}
				}
				modules[mod][sym] = true
			}
			for mod, wantFuncs := range modules {
				bin, err := Path(mod)
				if err != nil {
					t.Fatal(err)
				}
				got := programFuncs(t, bin)
				for f := range got {
					if !wantFuncs[f] {
						t.Errorf("%s defines %q, which the expected file does not list", mod, f)
					}
				}
				for f := range wantFuncs {
					if !got[f] {
						t.Errorf("%s does not define expected function %q", mod, f)
					}
				}
			}
		})
	}
}

func TestSplitKey(t *testing.T) {
	for _, tc := range []struct{ key, mod, sym string }{
		{"main", "", "main"},
		{"libplugin.so:plugin_work", "libplugin.so", "plugin_work"},
		{"exec_target:main", "exec_target", "main"},
		{"exc::thrower_a(int)", "", "exc::thrower_a(int)"},
		{"exec_target:ns::f(int)", "exec_target", "ns::f(int)"},
		{"f(std::string)", "", "f(std::string)"},
	} {
		mod, sym := SplitKey(tc.key)
		if mod != tc.mod || sym != tc.sym {
			t.Errorf("SplitKey(%q) = %q, %q; want %q, %q", tc.key, mod, sym, tc.mod, tc.sym)
		}
	}
}

func TestNormalize(t *testing.T) {
	e := &Expected{
		Threads: []ThreadGroup{
			{SpawnedBy: "b", NestingLevel: 2, ParentSpawnedBy: "a", Count: 1},
			{SpawnedBy: "a", NestingLevel: 1, Count: 2},
			{SpawnedBy: "b", NestingLevel: 2, ParentSpawnedBy: "a", Count: 3},
		},
		Processes: []ProcessGroup{
			{Exe: "x", Exec: true, Count: 1},
			{ForkedBy: "f", Exe: "p", Count: 1},
			{ForkedBy: "f", Exe: "p", Count: 1},
		},
	}
	e.Normalize()
	want := &Expected{
		Args:      []string{},
		Functions: map[string]Counts{},
		Threads: []ThreadGroup{
			{SpawnedBy: "a", NestingLevel: 1, Count: 2},
			{SpawnedBy: "b", NestingLevel: 2, ParentSpawnedBy: "a", Count: 4},
		},
		Processes: []ProcessGroup{
			{ForkedBy: "f", Exe: "p", Count: 2},
			{Exe: "x", Exec: true, Count: 1},
		},
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("Normalize:\n got  %+v\n want %+v", e, want)
	}
}

// dlopen finds libplugin.so next to its executable from any directory.
func TestDlopenFromOtherDir(t *testing.T) {
	mustBuild(t)
	out, st := run(t, "dlopen")
	if st.ExitCode() != 0 || !strings.Contains(string(out), "result=40") {
		t.Errorf("dlopen: exit %d, stdout %q", st.ExitCode(), out)
	}
}
