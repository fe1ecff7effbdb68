package attach

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/instrument"
)

func readExe(pid int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(p, " (deleted)")
}

func readArgv(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00")
}

func readComm(tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", tid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStatus reads the fields of /proc/PID/status.
func procStatus(pid int) map[string]string {
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

// statusMask reads a signal mask field of /proc/PID/status (SigPnd,
// SigCgt, ...).
func statusMask(st map[string]string, field string) uint64 {
	m, _ := strconv.ParseUint(st[field], 16, 64)
	return m
}

// tracerOf returns the pid tracing a task, 0 if none.
func tracerOf(tid int) int {
	n, _ := strconv.Atoi(procStatus(tid)["TracerPid"])
	return n
}

// tgid returns the thread group (process) id of a task.
func tgid(tid int) int {
	n, _ := strconv.Atoi(procStatus(tid)["Tgid"])
	return n
}

// taskIDs lists the threads of a process.
func taskIDs(pid int) ([]int, error) {
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

// trapPending tells whether a SIGTRAP is pending for the thread itself:
// an int3 it executed whose stop has not been reported yet.
func trapPending(tid int) bool {
	return statusMask(procStatus(tid), "SigPnd")&(1<<(unix.SIGTRAP-1)) != 0
}

// mappingProt returns the protection of the mapping holding addr.
func mappingProt(pid int, addr uint64) (byte, bool) {
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
