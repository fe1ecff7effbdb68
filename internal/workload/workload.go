// Package workload builds the native test programs in testdata/ and
// describes what a profiler must report for them.
//
// Each workload (testdata/src/<name>.c or .cpp) is built by
// testdata/Makefile into testdata/bin/<name>.  Beside its source,
// <name>.expected.json gives the exact calling-context facts of its default
// run: calls and recursive calls per function, threads other than each
// process's first, and processes other than the first.  Every workload
// except crash also counts its own calls when run with --selfcheck, which
// SelfCheck uses to check the expected files without a profiler.
package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Dir returns the absolute path of the repository's testdata directory.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("workload: cannot locate source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "testdata"))
}

// SrcDir returns the directory holding the workload sources and expected
// files.
func SrcDir() string { return filepath.Join(Dir(), "src") }

// BinDir returns the directory the workloads are built into.
func BinDir() string { return filepath.Join(Dir(), "bin") }

var (
	buildOnce sync.Once
	buildErr  error
)

// Build runs "make -C testdata" once per process (later calls return the
// first result).  Concurrent builds from several test processes are
// serialised with a lock file in testdata/bin.
func Build() error {
	buildOnce.Do(func() { buildErr = build() })
	return buildErr
}

func build() error {
	makePath, err := exec.LookPath("make")
	if err != nil {
		return fmt.Errorf("workload: cannot build test programs: make not found: %w", err)
	}
	for _, c := range []struct{ env, def string }{{"CC", "gcc"}, {"CXX", "g++"}} {
		prog := c.def
		if f := strings.Fields(os.Getenv(c.env)); len(f) > 0 {
			prog = f[0]
		}
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("workload: cannot build test programs: compiler %q not found (install gcc and g++, or set %s): %w", prog, c.env, err)
		}
	}
	if err := os.MkdirAll(BinDir(), 0o755); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(BinDir(), ".build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("workload: locking %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	cmd := exec.Command(makePath, "-C", Dir(), "-j"+strconv.Itoa(runtime.NumCPU()))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("workload: make -C %s: %w\n%s", Dir(), err, out)
	}
	return nil
}

// Path builds the workloads if needed and returns the path of the named
// binary in testdata/bin (e.g. "recursion", "libplugin.so", "stripped").
func Path(name string) (string, error) {
	if err := Build(); err != nil {
		return "", err
	}
	if name == "" || strings.ContainsRune(name, '/') {
		return "", fmt.Errorf("workload: bad workload name %q", name)
	}
	p := filepath.Join(BinDir(), name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("workload: no such workload binary: %w", err)
	}
	return p, nil
}

// Counts are the calls of one function.
type Counts struct {
	Calls uint64 `json:"calls"`
	// RecursiveCalls counts the activations that began while another
	// activation of the same function was on the same thread's stack.
	RecursiveCalls uint64 `json:"recursive_calls"`
}

// ThreadGroup counts threads (other than each process's first thread)
// that share a spawning subroutine, nesting level and parent's spawning
// subroutine.
type ThreadGroup struct {
	// SpawnedBy is the innermost program function on the parent thread's
	// stack that called pthread_create.
	SpawnedBy string `json:"spawned_by"`
	// NestingLevel is 0 for a process's first thread, else the parent's
	// level + 1.
	NestingLevel int `json:"nesting_level"`
	// ParentSpawnedBy is the parent thread's SpawnedBy, "" when the parent
	// is a process's first thread.
	ParentSpawnedBy string `json:"parent_spawned_by"`
	Count           int    `json:"count"`
}

// ProcessGroup counts processes (other than the first) that share a forking
// function, executable and kind.
type ProcessGroup struct {
	// ForkedBy is the innermost program function that called fork; "" for
	// an exec'd image.
	ForkedBy string `json:"forked_by"`
	// Exe is the base name of the process's executable.
	Exe string `json:"exe"`
	// Exec marks an image started by execve: a new process entry with the
	// same pid as the child that exec'd.
	Exec  bool `json:"exec,omitempty"`
	Count int  `json:"count"`
}

// Expected describes one run of a workload: the contents of
// testdata/src/<name>.expected.json, or of a --selfcheck report.
type Expected struct {
	Workload string   `json:"workload"`
	Args     []string `json:"args"`
	// ExitCode is the exit status; -1 when killed by a signal (as
	// os.ProcessState.ExitCode reports it), Signal then names the signal.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// Functions maps a function name to its counts, summed over all
	// processes and threads.  Functions of the first process's executable
	// are keyed by plain name; others by "module:name", where module is the
	// base name of a shared object (e.g. "libplugin.so:plugin_work") or of
	// an exec'd executable ("exec_target:main").  C++ names are demangled
	// with parameter lists, as c++filt prints them.
	Functions map[string]Counts `json:"functions"`
	Threads   []ThreadGroup     `json:"threads"`
	Processes []ProcessGroup    `json:"processes"`
}

// Normalize merges duplicate thread and process groups and sorts them, so
// that equal descriptions compare equal with reflect.DeepEqual.  Nil slices
// and maps become empty ones.
func (e *Expected) Normalize() {
	if e.Args == nil {
		e.Args = []string{}
	}
	if e.Functions == nil {
		e.Functions = map[string]Counts{}
	}

	tcount := map[ThreadGroup]int{}
	for _, t := range e.Threads {
		c := t.Count
		t.Count = 0
		tcount[t] += c
	}
	e.Threads = make([]ThreadGroup, 0, len(tcount))
	for t, c := range tcount {
		t.Count = c
		e.Threads = append(e.Threads, t)
	}
	sort.Slice(e.Threads, func(i, j int) bool {
		a, b := e.Threads[i], e.Threads[j]
		if a.NestingLevel != b.NestingLevel {
			return a.NestingLevel < b.NestingLevel
		}
		if a.SpawnedBy != b.SpawnedBy {
			return a.SpawnedBy < b.SpawnedBy
		}
		return a.ParentSpawnedBy < b.ParentSpawnedBy
	})

	pcount := map[ProcessGroup]int{}
	for _, p := range e.Processes {
		c := p.Count
		p.Count = 0
		pcount[p] += c
	}
	e.Processes = make([]ProcessGroup, 0, len(pcount))
	for p, c := range pcount {
		p.Count = c
		e.Processes = append(e.Processes, p)
	}
	sort.Slice(e.Processes, func(i, j int) bool {
		a, b := e.Processes[i], e.Processes[j]
		if a.Exec != b.Exec {
			return !a.Exec
		}
		if a.ForkedBy != b.ForkedBy {
			return a.ForkedBy < b.ForkedBy
		}
		return a.Exe < b.Exe
	})
}

// SplitKey splits a Functions key into its module ("" for the first
// process's executable) and symbol name.  A module prefix ends at the first
// single ':' (C++ "::" is not a separator).
func SplitKey(key string) (module, symbol string) {
	for i := 0; i < len(key); i++ {
		if key[i] != ':' {
			continue
		}
		if i+1 < len(key) && key[i+1] == ':' {
			return "", key
		}
		if strings.ContainsAny(key[:i], "()<> ") {
			return "", key
		}
		return key[:i], key[i+1:]
	}
	return "", key
}

func decode(data []byte) (*Expected, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Expected
	if err := dec.Decode(&e); err != nil {
		return nil, err
	}
	e.Normalize()
	return &e, nil
}

// ExpectedPath returns the path of the named workload's expected file.
func ExpectedPath(name string) string {
	return filepath.Join(SrcDir(), name+".expected.json")
}

// LoadExpected reads and normalizes testdata/src/<name>.expected.json.
func LoadExpected(name string) (*Expected, error) {
	data, err := os.ReadFile(ExpectedPath(name))
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	e, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("workload: %s: %w", ExpectedPath(name), err)
	}
	if e.Workload != name {
		return nil, fmt.Errorf("workload: %s: workload is %q, want %q", ExpectedPath(name), e.Workload, name)
	}
	return e, nil
}

// Names returns the names of the workloads that have an expected file,
// sorted.
func Names() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(SrcDir(), "*.expected.json"))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".expected.json"))
	}
	sort.Strings(names)
	return names, nil
}

// SelfCheck runs the named workload with args plus --selfcheck=<file> in a
// temporary directory and returns its own report of what it did, normalized.
// A non-zero exit status is not an error (ExitCode reports it); a missing or
// malformed report, or death by a signal, is.
func SelfCheck(name string, args ...string) (*Expected, error) {
	bin, err := Path(name)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "selfcheck-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	defer os.RemoveAll(dir)
	report := filepath.Join(dir, "selfcheck.json")

	cmd := exec.Command(bin, append(append([]string{}, args...), "--selfcheck="+report)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return nil, fmt.Errorf("workload: running %s: %w", name, runErr)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return nil, fmt.Errorf("workload: %s --selfcheck killed by %v\n%s", name, ws.Signal(), stderr.Bytes())
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, fmt.Errorf("workload: %s wrote no self-check report (exit code %d): %w\n%s",
			name, cmd.ProcessState.ExitCode(), err, stderr.Bytes())
	}
	e, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("workload: %s self-check report: %w\n%s", name, err, data)
	}
	if code := cmd.ProcessState.ExitCode(); e.ExitCode != code {
		return nil, fmt.Errorf("workload: %s reported exit code %d but exited with %d\n%s", name, e.ExitCode, code, stderr.Bytes())
	}
	return e, nil
}
