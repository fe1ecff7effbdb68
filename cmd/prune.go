package cmd

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/prune"
)

func newPruneCmd() *cobra.Command {
	var (
		out, threshold, metric, keep string
		minCalls                     int64
	)
	c := &cobra.Command{
		Use:   "prune FILE",
		Short: "Drop functions under a threshold and reconnect their orphans",
		Long: `prune removes the functions whose value over the whole profile is under a
threshold: a percentage of the traced time (--threshold 1%) or a duration
(--threshold 5ms) of the chosen metric (total, self or calls), and/or fewer than
--min-calls calls. A kept function whose caller was dropped is attached to its
nearest kept ancestor by an elided edge; dropped self time is kept as dropped
time of that ancestor, so every thread's time still adds up.

--keep REGEX keeps only the functions whose name (module:name for libraries)
matches, and every ancestor of theirs in the calling contexts.

Without --threshold the default is 1%, or 0 when --keep or --min-calls is given.`,
		Example: `  profile prune profile.data --threshold 1%
  profile prune profile.data --threshold 5ms --metric self -o small.data
  profile prune profile.data --keep '^parse' --min-calls 100`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: profileArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var opt prune.Options
			var err error
			if !c.Flags().Changed("threshold") && (keep != "" || minCalls > 0) {
				threshold = "0"
			}
			if opt.Threshold, opt.MinNs, err = prune.ParseThreshold(threshold); err != nil {
				return &usageError{err}
			}
			if opt.Metric, err = prune.ParseMetric(metric); err != nil {
				return &usageError{err}
			}
			if minCalls < 0 {
				return usagef("bad --min-calls %d: must not be negative", minCalls)
			}
			opt.MinCalls = minCalls
			if keep != "" {
				if opt.Keep, err = regexp.Compile(keep); err != nil {
					return usagef("bad --keep regular expression: %w", err)
				}
			}
			if err := opt.Check(); err != nil {
				return &usageError{err}
			}
			if out == "" {
				out = prunedName(args[0])
			}
			if err := checkProfileOutput(c, out); err != nil {
				return err
			}
			p, err := readProfile(args[0])
			if err != nil {
				return err
			}
			q, err := prune.Prune(p, opt)
			if err != nil {
				return fmt.Errorf("prune %s: %w", args[0], err)
			}
			if err := writeDest(c.OutOrStdout(), out, true, profileWriter(q)); err != nil {
				return err
			}
			before, after := countNodes(p.Threads), countNodes(q.Threads)
			fmt.Fprintf(c.ErrOrStderr(), "profile: wrote %s (%d of %d calling contexts kept)\n", outName(out), after, before)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVarP(&out, "output", "o", "", "write the pruned profile to `FILE`, - for the standard output (default: FILE with .pruned before its extension)")
	fl.StringVar(&threshold, "threshold", "1%", "drop functions under `AMOUNT`: a percentage of traced time (1%, 0.5%) or a duration (5ms, 250us)")
	fl.StringVar(&metric, "metric", "total", "the `METRIC` the threshold applies to: total, self or calls")
	fl.Int64Var(&minCalls, "min-calls", 0, "drop functions called fewer than `N` times")
	fl.StringVar(&keep, "keep", "", "keep only functions matching `REGEX` (module:name) and their ancestors")
	completeFlag(c, "output", fileArgs(-1, profileExt))
	choices(c, "metric",
		cobra.CompletionWithDesc("total", "total time"),
		cobra.CompletionWithDesc("self", "self time"),
		cobra.CompletionWithDesc("calls", "calls"))
	return c
}

// prunedName inserts ".pruned" before the extension: profile.data becomes
// profile.pruned.data.
func prunedName(path string) string {
	ext := filepath.Ext(path)
	if ext == "" || strings.HasPrefix(filepath.Base(path), ext) {
		return path + ".pruned"
	}
	return strings.TrimSuffix(path, ext) + ".pruned" + ext
}

func countNodes(threads []model.Thread) int {
	n := 0
	for _, t := range threads {
		n += len(t.Nodes)
	}
	return n
}
