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

// tgid returns the thread group (process) id of a task.
func tgid(tid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigPnd:"); ok {
			mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return mask&(1<<(5-1)) != 0 // SIGTRAP is 5
		}
	}
	return false
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
