package ptrace

import (
	"os/exec"
	"syscall"
)

// StartTraced makes cmd's process start traced by the calling OS thread:
// the child asks for it (PTRACE_TRACEME) before its exec, the only way to
// catch its first instruction. The caller waits for the exec's stop.
func StartTraced(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
}
