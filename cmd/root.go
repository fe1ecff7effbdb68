// Package cmd holds the command-line interface: one file per subcommand,
// each only parsing flags and calling the packages that do the work.
package cmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Version is the tool version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// exitError carries an exit status chosen by a subcommand (record exits
// with its target's status) without printing anything more.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "profile",
		Short: "Exact call-graph profiler for native Linux x86-64 programs",
		Long: `profile records exact per-thread call graphs of native Linux x86-64 programs
with ptrace breakpoints (no recompilation, no restart), and merges, prunes,
summarizes and renders the saved profiles offline.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newInfoCmd(), newRecordCmd(), newAttachCmd(), newMergeCmd(), newPruneCmd(), newSummaryCmd(), newRenderCmd())
	return root
}

// Execute runs the command line and returns the process exit status.
func Execute() int {
	err := newRootCmd().Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(os.Stderr, "profile: %v\n", err)
	return 1
}
