package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/model"
)

func newExportCmd() *cobra.Command {
	var (
		format, value, out string
		threads            bool
		timeKind           string
		pid, tid           int
	)
	c := &cobra.Command{
		Use:   "export FILE",
		Short: "Write a profile for other tools: pprof (go tool pprof), folded stacks (flame graphs) or a Chrome trace (Perfetto)",
		Long: `export writes a profile in another tool's format (docs/export.md):

  pprof   gzip-compressed profile.proto for go tool pprof (-top, -traces,
          -http), Pyroscope, Parca, ...: one sample per calling context with
          the values calls, self and total (ns), a "thread" label.
  folded  "frame;frame;frame value" lines, root first, for flamegraph.pl,
          inferno and speedscope: --value self (ns, the default), calls or
          total; --threads makes the thread ("name-tid") the first frame,
          otherwise identical paths of different threads are summed.
  chrome  Chrome Trace Event Format JSON for Perfetto UI (ui.perfetto.dev)
          and chrome://tracing: the detail trees (record --detail) on each
          thread's timeline, with arguments and return values, and arrows
          from spawning and forking threads. A profile recorded without
          --detail has only the process and thread names.

--pid and --tid export one process or thread (of a merged profile, only
threads it does not combine with others).

pprof and folded carry busy time (--scope busy, as summary shows it: the
CPU samples' times where the profile has them, else the measured times less
the time in waiting calls) or, with --scope wall, the measured wall times.

The output goes next to FILE with the format's extension (profile.data ->
profile.pb.gz, profile.folded or profile.trace.json) unless -o names a
file, or -o - for standard output.`,
		Example: `  profile export profile.data --format pprof && go tool pprof -top profile.pb.gz
  profile export profile.data --format folded -o - | flamegraph.pl > flame.svg
  profile export profile.data --format folded --threads --value calls
  profile export profile.data --format chrome`,
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
			busy, err := busyScope(timeKind)
			if err != nil {
				return err
			}
			if strings.EqualFold(format, "chrome") && c.Flags().Changed("scope") {
				return usagef("--scope is for pprof and folded: a chrome trace shows the detail trees' own times")
			}
			if out, err = outputPath(args[0], out, strings.TrimPrefix(f.Ext, ".")); err != nil {
				return err
			}
			if err := checkScope(pid, tid); err != nil {
				return err
			}
			p, err := readProfile(args[0])
			if err != nil {
				return err
			}
			if p, err = p.Only(model.Scope{Pid: pid, Tid: tid}); err != nil {
				return &usageError{err}
			}
			chrome := strings.EqualFold(format, "chrome")
			if chrome {
				if err := export.CheckChrome(p); err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
			}
			opt := export.Options{Value: v, Threads: threads, Busy: busy && !chrome}
			if err := emit(c, out, func(w io.Writer) error { return f.Write(w, p, opt) }); err != nil {
				return err
			}
			if chrome && export.ChromeTrees(p) == 0 {
				// Valid, but empty of what a trace is for.
				fmt.Fprintf(c.ErrOrStderr(), "profile: %s has no detail trees (record --detail REGEX): the trace names the processes and threads only\n", args[0])
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&format, "format", "", "output `FORMAT`: pprof, folded or chrome (required)")
	c.MarkFlagRequired("format")
	fl.StringVarP(&out, "output", "o", "", "write to `FILE`, - for standard output (default: FILE with the format's extension)")
	fl.StringVar(&value, "value", "self", "folded: the `VALUE` of each line: self (ns), calls or total (ns)")
	fl.BoolVar(&threads, "threads", false, "folded: the thread (name-tid) as the first frame, threads kept apart")
	fl.StringVar(&timeKind, "scope", "busy", "pprof and folded: times of `KIND` busy (waiting calls' time left out, or the CPU samples' when recorded with them) or wall")
	fl.IntVar(&pid, "pid", 0, "export only process `PID`")
	fl.IntVar(&tid, "tid", 0, "export only thread `TID`")
	scopeChoices(c)
	choices(c, "format",
		cobra.CompletionWithDesc("pprof", "gzip-compressed profile.proto for go tool pprof"),
		cobra.CompletionWithDesc("folded", "folded stacks for flame graphs"),
		cobra.CompletionWithDesc("chrome", "Chrome trace JSON of the detail trees for Perfetto UI"))
	choices(c, "value", valueChoices...)
	return c
}
