package cmd

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/timeline"
)

var treesWriters = map[string]func(io.Writer, *model.Profile, timeline.Options) error{
	"text": timeline.WriteText,
	"json": timeline.WriteJSON,
}

func newTreesCmd() *cobra.Command {
	var (
		format    string
		tid       int
		minDur    time.Duration
		fullNames bool
	)
	c := &cobra.Command{
		Use:   "trees FILE",
		Short: "Show the calls recorded in detail (record --detail) as a timeline",
		Long: `trees prints the detail trees of a profile recorded with --detail REGEX (with
--slow, --detail-if): per thread, one line per call, as uftrace replay does:
its start (from the profile's start), its duration, and the call indented by
depth with its arguments and return value, "handle_request(50, 5007, 103) = 50".
Kept calls (those that met the rule) are marked "*"; the calls above them are
their callers, shown once for consecutive trees that share them.

Arguments show for the selected functions only, as many as the function has
(all six registers when its debug information does not say). A register
whose upper half is 0 or all ones shows as a C int (its low 32 bits,
signed), any other value (a pointer, a 64-bit value) in hex. A duration
"≥ ..." is a call still running at the end (or already running when tracing
began).

A profile recorded without --detail is an error (exit 1); one where no call
met the rule prints so and exits 0. --format json is the machine-readable
form (docs/trees.md).`,
		Example: `  profile trees profile.data
  profile trees profile.data --min 20ms --tid 4242
  profile trees profile.data --format json > trees.json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: profileArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			write, ok := treesWriters[strings.ToLower(format)]
			if !ok {
				return usagef("unknown --format %q: use text or json", format)
			}
			if minDur < 0 {
				return usagef("bad --min %s: must not be negative", minDur)
			}
			if err := checkScope(0, tid); err != nil {
				return err
			}
			p, err := readProfile(args[0])
			if err != nil {
				return err
			}
			w := bufio.NewWriter(c.OutOrStdout())
			if err := write(w, p, timeline.Options{Tid: tid, MinNs: int64(minDur), FullNames: fullNames}); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			return w.Flush()
		},
	}
	fl := c.Flags()
	fl.StringVar(&format, "format", "text", "output `FORMAT`: text or json")
	fl.IntVar(&tid, "tid", 0, "show only the trees of thread `TID`")
	fl.DurationVar(&minDur, "min", 0, "show only trees whose kept call lasted at least `D` (e.g. 20ms)")
	fl.BoolVar(&fullNames, "full-names", false, "show function names in full (json always does)")
	choices(c, "format",
		cobra.CompletionWithDesc("text", "an indented timeline"),
		cobra.CompletionWithDesc("json", "machine-readable (docs/trees.md)"))
	return c
}
