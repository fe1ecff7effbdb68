package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/export"
)

func newImportCmd() *cobra.Command {
	var out, index string
	c := &cobra.Command{
		Use:   "import PPROF",
		Short: "Turn a pprof profile (a Go CPU profile, perf_to_profile's output) into a profile with sampled values",
		Long: `import reads a pprof profile (profile.proto, gzip-compressed or not) and
writes it as a profile that merge, prune, summary and render take.

A profile written by "profile export --format pprof" comes back with its
threads, calls, self and total times. Any other profile has sampled values:
one sample type (--sample-index, default the profile's default type, else
its last one measured in time, cpu for a Go CPU profile) converted to
nanoseconds, a thread per thread label (thread, tid, goroutine) or one for
all samples, inlined frames expanded. Call counts are unknown (0); info,
summary and render say the values are sampled.

The output is PPROF with its extension (after .gz) replaced by .data unless
-o names a file; an existing file is kept as FILE.old.`,
		Example: `  profile import cpu.pb.gz -o cpu.data
  profile import cpu.pprof --sample-index samples
  profile import profile.pb.gz`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: fileArgs(1, pprofExts...),
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				out = renderedName(strings.TrimSuffix(args[0], ".gz"), "data")
			}
			if err := checkProfileOutput(c, out); err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s: no such file", args[0])
			} else if err != nil {
				return err
			}
			defer f.Close()
			p, err := export.ReadPprof(f, export.ImportOptions{SampleIndex: index})
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			p.Meta.ToolVersion = Version
			if err := writeDest(c.OutOrStdout(), out, true, profileWriter(p)); err != nil {
				return err
			}
			threads := "1 thread"
			if len(p.Threads) != 1 {
				threads = fmt.Sprintf("%d threads", len(p.Threads))
			}
			fmt.Fprintf(c.ErrOrStderr(), "profile: wrote %s (%s, values %s)\n", outName(out), threads, p.Meta.Values())
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write the profile to `FILE`, - for the standard output (default: PPROF with the extension .data)")
	c.Flags().StringVar(&index, "sample-index", "", "import the sample type `NAME` (or its index), converted to nanoseconds")
	completeFlag(c, "output", fileArgs(-1, profileExt))
	return c
}
