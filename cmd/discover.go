package cmd

import (
	"bufio"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/discover"
	"github.com/profile-dev/profile/instrument"
)

func newDiscoverCmd() *cobra.Command {
	var (
		pid       int
		exe       string
		depth     int
		format    string
		profile   string
		fullNames bool
		debugDir  string
	)
	c := &cobra.Command{
		Use:   "discover (--pid PID | --exe FILE) FUNC",
		Short: "List the functions a function can call, found in its machine code",
		Long: `discover disassembles FUNC (a symbol, or module:symbol) and lists its callees:
direct calls, calls through the PLT (or a GOT slot) resolved to the library
that defines the function (module:function), tail jumps to another function,
and its indirect call sites (through a register or memory), which only a run
can resolve: --profile FILE (a profile of the same program) adds the
functions it saw FUNC call indirectly. --depth N repeats the discovery on
the callees, level by level; a function is expanded once, at its first
place, and marked where it comes again.

With --exe the libraries are found as the dynamic linker would find them;
with --pid they are the ones the process has loaded (dlopen'ed included).
record and attach --expand FUNC trace what discover lists (docs/discover.md).
A stripped module's functions come from its separate debug file, as
record's do (--debug-dir, docs/symbols.md).`,
		Example: `  profile discover --exe ./server handle_request
  profile discover --pid 4242 parse_request --depth 2
  profile discover --exe ./server handle_request --profile run.data --format json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, args []string) error {
			if (pid != 0) == (exe != "") {
				return usagef("discover needs --pid PID or --exe FILE (one of them)")
			}
			if pid < 0 {
				return usagef("bad --pid %d: must be positive", pid)
			}
			if depth < 1 {
				return usagef("bad --depth %d: at least 1", depth)
			}
			if format != "text" && format != "json" {
				return usagef("unknown --format %q: use text or json", format)
			}
			d, err := newDiscoverer(pid, exe, debugSearch(debugDir, c.ErrOrStderr()))
			if err != nil {
				return err
			}
			if profile != "" {
				p, err := readProfile(profile)
				if err != nil {
					return err
				}
				d.UseProfile(p)
			}
			disc, err := d.Discover(args[0], depth)
			if err != nil {
				return err
			}
			for _, w := range disc.Warnings {
				fmt.Fprintf(c.ErrOrStderr(), "profile: warning: %s\n", w)
			}
			w := bufio.NewWriter(c.OutOrStdout())
			if format == "json" {
				err = discover.WriteJSON(w, disc, discover.JSONOptions{Function: args[0], Profile: profile})
			} else {
				err = discover.WriteText(w, disc, discover.Options{FullNames: fullNames})
			}
			if err != nil {
				return err
			}
			return w.Flush()
		},
	}
	fl := c.Flags()
	fl.IntVarP(&pid, "pid", "p", 0, "read the program of the running process `PID` and the libraries it has loaded")
	fl.StringVar(&exe, "exe", "", "read the executable `FILE` and the libraries it needs")
	fl.IntVar(&depth, "depth", 1, "list callees `N` levels down")
	fl.StringVar(&format, "format", "text", "output `FORMAT`: text or json")
	fl.StringVar(&profile, "profile", "", "add the targets of indirect calls seen in the profile `FILE`")
	fl.BoolVar(&fullNames, "full-names", false, "show function names in full (json always does)")
	registerDebugDir(c, &debugDir)
	completeFlag(c, "pid", completePids)
	completeFlag(c, "profile", profileArgs(-1))
	choices(c, "format",
		cobra.CompletionWithDesc("text", "an indented table"),
		cobra.CompletionWithDesc("json", "one document (docs/discover.md)"))
	return c
}

// newDiscoverer reads the program of process pid, or the executable exe.
func newDiscoverer(pid int, exe string, debug *instrument.DebugSearch) (*instrument.Discoverer, error) {
	if pid != 0 {
		return instrument.NewPidDiscoverer(pid, debug)
	}
	return instrument.NewExeDiscoverer(exe, debug)
}
