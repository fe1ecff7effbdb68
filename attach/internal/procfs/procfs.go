package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/instrument"
)

// Exe is the path of process pid's executable, "" if unreadable.
func Exe(pid int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(p, " (deleted)")
}

// Argv is process pid's command line.
func Argv(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00")
}

// Comm is task tid's name.
func Comm(tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", tid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Status reads the fields of /proc/PID/status.
func Status(pid int) map[string]string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// Mask reads a signal mask field of /proc/PID/status (SigPnd,
// SigCgt, ...).
func Mask(st map[string]string, field string) uint64 {
	m, _ := strconv.ParseUint(st[field], 16, 64)
	return m
}

// TracerOf returns the process tracing a task, 0 if none.
func TracerOf(tid int) int {
	n, _ := strconv.Atoi(Status(tid)["TracerPid"])
	if g := Tgid(n); n != 0 && g != 0 {
		return g // TracerPid names the tracing thread: its process
	}
	return n
}

// Alive tells whether thread tid of process pid exists and has not ended
// (a zombie runs no code).
func Alive(pid, tid int) bool {
	st := Status(tid)
	if st == nil || st["Tgid"] != strconv.Itoa(pid) {
		return false
	}
	return !strings.HasPrefix(st["State"], "Z") && !strings.HasPrefix(st["State"], "X")
}

// IOWorker tells an io_uring worker thread (PF_IO_WORKER): it runs no
// user code, and no signal or ptrace reaches it.
func IOWorker(tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 7 {
		return false
	}
	flags, _ := strconv.ParseUint(f[6], 10, 64)
	const pfIOWorker = 0x10
	return flags&pfIOWorker != 0
}

// Tgid returns the thread group (process) id of a task.
func Tgid(tid int) int {
	n, _ := strconv.Atoi(Status(tid)["Tgid"])
	return n
}

// Tasks lists the threads of a process.
func Tasks(pid int) ([]int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// TrapPending tells whether a SIGTRAP is pending for the thread itself:
// an int3 it executed whose stop has not been reported yet.
func TrapPending(tid int) bool {
	return Mask(Status(tid), "SigPnd")&(1<<(unix.SIGTRAP-1)) != 0
}

// MappingProt returns the protection of the mapping holding addr.
func MappingProt(pid int, addr uint64) (byte, bool) {
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return 0, false
	}
	for _, m := range maps {
		if addr < m.Start || addr >= m.End || len(m.Perms) < 3 {
			continue
		}
		var p byte
		for i, bit := range []byte{unix.PROT_READ, unix.PROT_WRITE, unix.PROT_EXEC} {
			if m.Perms[i] != '-' {
				p |= bit
			}
		}
		return p, true
	}
	return 0, false
}

// Children lists the child processes of process pid: the children of each
// of its threads (/proc/PID/task/TID/children), each once.
func Children(pid int) []int {
	tids, err := Tasks(pid)
	if err != nil {
		return nil
	}
	seen := map[int]bool{}
	var out []int
	for _, tid := range tids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, tid))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// PPid returns the parent process id of a process, 0 if unknown.
func PPid(pid int) int {
	n, _ := strconv.Atoi(Status(pid)["PPid"])
	return n
}
