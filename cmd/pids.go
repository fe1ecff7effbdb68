package cmd

import (
	"slices"

	"github.com/spf13/cobra"
)

// pidSelection is the processes attach and top take: --pid, a list (-p
// 1,2,3, or -p repeated), and --tree, each with its descendants.
type pidSelection struct {
	pids []int
	tree bool
}

func (s *pidSelection) register(c *cobra.Command, what string) {
	c.Flags().IntSliceVarP(&s.pids, "pid", "p", nil, what+" the process `PID` (a list: 1,2,3, or repeat -p)")
	c.Flags().BoolVar(&s.tree, "tree", false, "take each --pid process's descendants too (those it has now; later ones are followed anyway)")
	completeFlag(c, "pid", completePids)
}

// list is the selected pids, each once, in order; cmd names the command
// for the usage error when there is none.
func (s *pidSelection) list(cmd string) ([]int, error) {
	if len(s.pids) == 0 {
		return nil, usagef("%s needs --pid PID", cmd)
	}
	var out []int
	for _, pid := range s.pids {
		if pid <= 0 {
			return nil, usagef("--pid %d: not a process id", pid)
		}
		if !slices.Contains(out, pid) {
			out = append(out, pid)
		}
	}
	return out, nil
}
