package cmd

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/export"
)

func newExportCmd() *cobra.Command {
	var (
		format, value, out string
		threads            bool
	)
	c := &cobra.Command{
		Use:   "export FILE",
		Short: "Write a profile for other tools: pprof (go tool pprof) or folded stacks (flame graphs)",
		Long: `export writes a profile in another tool's format (docs/export.md):

  pprof   gzip-compressed profile.proto for go tool pprof (-top, -traces,
          -http), Pyroscope, Parca, ...: one sample per calling context with
          the values calls, self and total (ns), a "thread" label.
  folded  "frame;frame;frame value" lines, root first, for flamegraph.pl,
          inferno and speedscope: --value self (ns, the default), calls or
          total; --threads makes the thread ("name-tid") the first frame,
          otherwise identical paths of different threads are summed.

The output goes next to FILE with the format's extension (profile.data ->
profile.pb.gz or profile.folded) unless -o names a file, or -o - for
standard output.`,
		Example: `  profile export profile.data --format pprof && go tool pprof -top profile.pb.gz
  profile export profile.data --format folded -o - | flamegraph.pl > flame.svg
  profile export profile.data --format folded --threads --value calls`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: profileArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, ok := export.Formats[strings.ToLower(format)]
			if !ok {
				return usagef("unknown --format %q: use %s", format, strings.Join(export.FormatNames(), " or "))
			}
			v, err := export.ParseValue(value)
			if err != nil {
				return usagef("bad --value: %w", err)
			}
			if out, err = outputPath(args[0], out, strings.TrimPrefix(f.Ext, ".")); err != nil {
				return err
			}
			p, err := readProfile(args[0])
			if err != nil {
				return err
			}
			opt := export.Options{Value: v, Threads: threads}
			return emit(c, out, func(w io.Writer) error { return f.Write(w, p, opt) })
		},
	}
	fl := c.Flags()
	fl.StringVar(&format, "format", "", "output `FORMAT`: pprof or folded (required)")
	c.MarkFlagRequired("format")
	fl.StringVarP(&out, "output", "o", "", "write to `FILE`, - for standard output (default: FILE with the format's extension)")
	fl.StringVar(&value, "value", "self", "folded: the `VALUE` of each line: self (ns), calls or total (ns)")
	fl.BoolVar(&threads, "threads", false, "folded: the thread (name-tid) as the first frame, threads kept apart")
	choices(c, "format",
		cobra.CompletionWithDesc("pprof", "gzip-compressed profile.proto for go tool pprof"),
		cobra.CompletionWithDesc("folded", "folded stacks for flame graphs"))
	choices(c, "value", valueChoices...)
	return c
}
