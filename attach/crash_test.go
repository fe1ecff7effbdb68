package attach

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

func TestCrashCapture(t *testing.T) {
	forEachProbe(t, func(t *testing.T, _ Options) {
		var limit syscall.Rlimit
		syscall.Getrlimit(syscall.RLIMIT_CORE, &limit)
		unlimited := syscall.Rlimit{Cur: ^uint64(0), Max: ^uint64(0)}
		if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &unlimited); err != nil {
			t.Skipf("cannot enable core dumps: %v", err)
		}
		defer syscall.Setrlimit(syscall.RLIMIT_CORE, &limit)
		bin, err := workload.Path("crash")
		if err != nil {
			t.Fatal(err)
		}
		// The untraced reference: how it dies on its own.
		ref := exec.Command(bin, "--core")
		ref.Dir = t.TempDir()
		ref.Run()
		refStatus := ref.ProcessState.Sys().(syscall.WaitStatus)

		dir := t.TempDir()
		opt := defaultOptions(t)
		opt.dir = dir
		var snap *model.Profile
		opt.Live.OnCrash = func(p *model.Profile) { snap = p }
		r, err := Record(t.Context(), []string{bin, "--core"}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if r.Signal != syscall.SIGSEGV || r.CoreDumped != refStatus.CoreDump() {
			t.Fatalf("signal %v core %v, untraced: signal %v core %v", r.Signal, r.CoreDumped, refStatus.Signal(), refStatus.CoreDump())
		}
		if refStatus.CoreDump() {
			if m, _ := filepath.Glob(filepath.Join(dir, "core*")); len(m) == 0 && !pipedCores() {
				t.Fatal("no core file from the traced crash")
			}
		}
		for name, p := range map[string]*model.Profile{"final": r.Profile, "snapshot": snap} {
			if p == nil {
				t.Fatalf("%s: no profile", name)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			c := p.Meta.Crash
			if !p.Meta.Partial || c == nil || c.Signal != "SIGSEGV" || c.Addr != 0 {
				t.Fatalf("%s: meta %+v crash %+v", name, p.Meta, c)
			}
			stack := strings.Join(c.Stack, " | ")
			if !strings.HasPrefix(stack, "crash:crash_here+") || !strings.HasSuffix(stack, "crash_here | main") {
				t.Fatalf("%s: crash stack %q", name, stack)
			}
		}
		want, _ := workload.LoadExpected("crash")
		if got := observe(r.Profile); !equalCounts(got.Functions, want.Functions) {
			t.Fatalf("functions %v, want %v", got.Functions, want.Functions)
		}
	})
}

// pipedCores tells whether the kernel hands cores to a program instead of
// writing files.
func pipedCores() bool {
	b, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	return strings.HasPrefix(string(b), "|")
}

func equalCounts(a, b map[string]workload.Counts) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
