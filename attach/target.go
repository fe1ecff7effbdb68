package attach

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/instrument"
)

// ErrGoProgram refuses a Go program without --force.
var ErrGoProgram = errors.New("a Go program: its stacks move and switch, which this tracer cannot follow (counts would be wrong)")

// goHint is what to use on a Go program instead.
const goHint = "profile it with runtime/pprof or net/http/pprof, or pass --force to trace it anyway"

// checkProgram refuses what cannot be traced correctly before anything is
// done to the target: a Go program (unless forced, then with a warning in
// the profile).
func (e *engine) checkProgram(path string) error {
	if path == "" || !instrument.IsGoProgram(path) {
		return nil
	}
	if !e.opt.Force {
		return fmt.Errorf("%s is %w; %s", path, ErrGoProgram, goHint)
	}
	e.s.Warn(fmt.Sprintf("%s is a Go program traced with --force: its stacks move and switch, so counts may be wrong", baseName(path)))
	return nil
}

// nothingToTrace explains an image in which no function was selected:
// whether its executable has symbols, which of its libraries do, and the
// --lib line that would select one.
func (e *engine) nothingToTrace(p *process) error {
	var what string
	if p.stripped {
		what = fmt.Sprintf("; %s has no symbol table", baseName(p.exe))
	}
	maps, err := instrument.ReadMaps(p.pid)
	if err != nil {
		return fmt.Errorf("%w%s", ErrNoFunctions, what)
	}
	var libs []string
	for _, path := range instrument.LoadedPaths(maps) {
		if path == p.exe || isDynamicLinker(path) {
			continue
		}
		if m, err := instrument.Open(path); err == nil && len(m.Symbols) > 0 {
			libs = append(libs, baseName(path))
		}
	}
	if len(libs) == 0 {
		return fmt.Errorf("%w%s, nor has any library it loaded", ErrNoFunctions, what)
	}
	return fmt.Errorf("%w%s; libraries with symbols: %s (--lib %s traces every function of %[4]s)",
		ErrNoFunctions, what, strings.Join(libs, ", "), libs[0])
}

// checkAttachable refuses, with the cause and the fix, what ptrace would
// refuse or what must not be traced: a missing process, a zombie, a kernel
// thread, profile itself, a process every thread of which another tracer
// holds.
func checkAttachable(pid int) error {
	st := procfs.Status(pid)
	if st == nil {
		return fmt.Errorf("attach to pid %d: no such process", pid)
	}
	switch {
	case strings.HasPrefix(st["State"], "Z") || strings.HasPrefix(st["State"], "X"):
		return fmt.Errorf("attach to pid %d: it is a zombie (it has exited and waits for its parent to reap it): nothing runs to trace", pid)
	case st["Kthread"] == "1" || st["PPid"] == "2" || pid == 2:
		return fmt.Errorf("attach to pid %d: it is a kernel thread; only user-space processes can be traced", pid)
	case pid == os.Getpid():
		return fmt.Errorf("attach to pid %d: that is profile itself", pid)
	}
	if tp := procfs.TracerOf(pid); tp != 0 && !someFree(pid) {
		return fmt.Errorf("attach to pid %d: it is already traced by pid %d (%s): detach that debugger or tracer first", pid, tp, procfs.Comm(tp))
	}
	return nil
}

// someFree tells whether a thread of pid has no tracer: the attach traces
// it, and leaves out the threads another tracer holds.
func someFree(pid int) bool {
	tids, _ := procfs.Tasks(pid)
	for _, tid := range tids {
		if procfs.TracerOf(tid) == 0 && !procfs.IOWorker(tid) {
			return true
		}
	}
	return false
}

// attachError explains a failed PTRACE_SEIZE: one line, cause and fix.
func attachError(pid int, err error) error {
	if errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("attach to pid %d: no such process", pid)
	}
	if !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("attach to pid %d: %w", pid, err)
	}
	if e := checkAttachable(pid); e != nil {
		return e // it changed meanwhile (another tracer came first, say)
	}
	scope := ""
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		scope = strings.TrimSpace(string(b))
	}
	self := procfs.Status(os.Getpid())
	const capSysPtrace = 19
	capEff, _ := strconv.ParseUint(self["CapEff"], 16, 64)
	hasCap := capEff&(1<<capSysPtrace) != 0
	switch {
	case scope == "3":
		return fmt.Errorf("attach to pid %d: permission denied: kernel.yama.ptrace_scope is 3, which forbids ptrace until reboot", pid)
	case os.Geteuid() == 0 && !hasCap:
		return fmt.Errorf("attach to pid %d: permission denied: profile runs without CAP_SYS_PTRACE (in a container, run it with --cap-add SYS_PTRACE)", pid)
	case self["Seccomp"] == "2":
		return fmt.Errorf("attach to pid %d: permission denied: a seccomp filter forbids ptrace here (in a container, run it with --cap-add SYS_PTRACE --security-opt seccomp=unconfined)", pid)
	case os.Geteuid() == 0 || hasCap:
		return fmt.Errorf("attach to pid %d: permission denied although profile may trace any process: a security module (AppArmor, SELinux) forbids it, or pid %d is protected", pid, pid)
	case scope == "1" || scope == "2":
		return fmt.Errorf("attach to pid %d: permission denied: kernel.yama.ptrace_scope is %s; run `sudo sysctl kernel.yama.ptrace_scope=0`, or run as root", pid, scope)
	}
	if uid := strings.Fields(procfs.Status(pid)["Uid"]); len(uid) > 0 && uid[0] != strconv.Itoa(os.Getuid()) {
		return fmt.Errorf("attach to pid %d: permission denied: it belongs to uid %s; run as that user or as root (or grant CAP_SYS_PTRACE: setcap cap_sys_ptrace+ep $(which profile))", pid, uid[0])
	}
	return fmt.Errorf("attach to pid %d: permission denied; run as root or grant CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep $(which profile))", pid)
}
