// Package cmd holds the command-line interface: one file per subcommand,
// each only parsing flags and calling the packages that do the work.
package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Version is the tool version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// exitError carries an exit status chosen by a subcommand (record exits
// with its target's status) without printing anything more.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a mistake in the command line (unknown command or flag,
// wrong number of arguments, a bad flag value): exit status 2, as for other
// command-line tools, so scripts can tell it from a failure of the work.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error {
	return &usageError{fmt.Errorf(format, a...)}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "profile",
		Short: "Exact call-graph profiler for native Linux x86-64 programs",
		Long: `profile launches a native Linux x86-64 program or attaches to a running one
and records exact per-thread call graphs with wall-clock times, using inline
probes and, where a function cannot be patched, ptrace breakpoints; it follows
threads, forks and execs. Offline subcommands merge, prune, summarize, diff,
export and render the saved profiles.`,
		Example: `  profile record -- ./server --port 8080
  profile attach --pid 4242 --duration 10s
  profile summary profile.data --top 20
  profile render profile.data --svg`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// With Args set, cobra leaves an unknown command to us (a usage
		// error) rather than failing in its own command lookup.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				msg += " (did you mean " + strings.Join(s, " or ") + "?)"
			}
			return &usageError{errors.New(msg)}
		},
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              func(c *cobra.Command, _ []string) error { return c.Help() },
		// cobra checks required and exclusive flags after this hook: checked
		// here first, their errors are usage errors.
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if err := c.ValidateRequiredFlags(); err != nil {
				return &usageError{err}
			}
			if err := c.ValidateFlagGroups(); err != nil {
				return &usageError{err}
			}
			// Left out, -o has a default; given empty, it is a mistake.
			if o := c.Flags().Lookup("output"); o != nil && o.Changed && o.Value.String() == "" {
				return usagef("-o: empty file name")
			}
			return nil
		},
		SuggestionsMinimumDistance: 2,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(newInfoCmd(), newRecordCmd(), newAttachCmd(), newMergeCmd(), newPruneCmd(), newSummaryCmd(), newRenderCmd(), newExportCmd(), newComponentsCmd(), newImportCmd(), newDiffCmd(), newTopCmd(), newTreesCmd(), newDiscoverCmd(), newVersionCmd())
	// Made now rather than when cobra runs, so that they are set up as ours.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	setUpBuiltins(root)
	usageArgs(root)
	completeRest(root)
	return root
}

// usageArgs makes the argument errors of c and its subcommands (wrong
// number of arguments, unknown subcommand) usage errors.
func usageArgs(c *cobra.Command) {
	if args := c.Args; args != nil && c.HasParent() {
		c.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return &usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// Execute runs the command line and returns the process exit status.
func Execute() int {
	return exitCode(newRootCmd().Execute(), os.Stderr)
}

// exitCode reports err on stderr and returns the exit status for it: 0 for
// success, a subcommand's own status, 2 for a usage error, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "profile: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}
