package cmd

import (
	"bufio"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/summary"
)

var summaryWriters = map[string]func(io.Writer, *summary.Report) error{
	"table":    summary.WriteTable,
	"markdown": summary.WriteMarkdown,
	"md":       summary.WriteMarkdown,
	"json":     summary.WriteJSON,
	"csv":      summary.WriteCSV,
}

func newSummaryCmd() *cobra.Command {
	var (
		format        string
		top, pid, tid int
		threads       bool
		fullNames     bool
		timeKind      string
	)
	c := &cobra.Command{
		Use:     "summary FILE",
		Aliases: []string{"summarize"},
		Short:   "Summarize a profile: hottest functions, edges and path, recursion, threads, blocking",
		Long: `summary prints the numbers of a profile: call-graph size, calls by kind (direct,
indirect, PLT), the hottest functions (self time) and edges (total time), the
hottest path, recursion, threads, processes and levels of multithreading, the
coverage of each library and the time blocked in waiting calls.

--format json is the stable machine-readable form (docs/summary-json.md);
csv carries the same numbers; table and markdown are for people.
Percentages are of the traced time of the scope (--pid, --tid).

Times are busy time (--scope busy, the default, as render's): the time
blocked in waiting calls (sleeps, I/O, locks, condition variables:
docs/summary-json.md lists them) is out of every time, so that an idle
thread pool's pthread_cond_wait never tops the tables; percentages are of
the busy time. The blocked time keeps its own table (Blocking). --scope
wall keeps it in every time, as versions before 2026-11 did by default.
A profile recorded with CPU samples (record's default) has its busy times
from them: a function's self time is the CPU time sampled in its own
code, a waiting call's included (a thread copying data in read is busy),
free of the probes' cost; the profile table's "busy times" row says how
they were sampled. --scope wall shows the measured times.

A function traced with --counted has its exact calls and no time of its own
(it is in its callers' self time): the tables show "counted" where its time
would be, the JSON "counted": true and no time fields; with CPU samples, busy
times give it the CPU time sampled in its code, "counted" only if none was.

--threads breaks every function and edge down by thread (table, markdown and
json): threads are numbered as render --threads numbers them, and spawn and
fork edges say who created whom as "0→1" (thread 0 spawned thread 1).

The tables shorten C++ and Rust names: parameter lists dropped, template
arguments as <…> ("std::vector<…>::push_back"); --full-names shows them
whole. JSON and CSV always carry the full names.`,
		Example: `  profile summary profile.data --top 20
  profile summary profile.data --format json > summary.json
  profile summary profile.data --threads --pid 4242
  profile summary profile.data --scope wall --top 10`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: profileArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			write, ok := summaryWriters[strings.ToLower(format)]
			if !ok {
				return usagef("unknown --format %q: use table, markdown, json or csv", format)
			}
			if threads && strings.EqualFold(format, "csv") {
				return usagef("--threads: not available with --format csv (use table, markdown or json)")
			}
			if top < 0 {
				return usagef("bad --top %d: must not be negative", top)
			}
			if err := checkScope(pid, tid); err != nil {
				return err
			}
			busy, err := busyScope(timeKind)
			if err != nil {
				return err
			}
			p, err := readProfile(args[0])
			if err != nil {
				return err
			}
			r, err := summary.Compute(p, summary.Options{Top: top, Pid: pid, Tid: tid, Threads: threads,
				FullNames: fullNames, Busy: busy})
			if err != nil {
				return err
			}
			w := bufio.NewWriter(c.OutOrStdout())
			if err := write(w, r); err != nil {
				return err
			}
			return w.Flush()
		},
	}
	fl := c.Flags()
	fl.StringVar(&format, "format", "table", "output `FORMAT`: table, markdown, json or csv")
	fl.IntVar(&top, "top", 0, "list only the `N` hottest functions and edges (0: all)")
	fl.IntVar(&pid, "pid", 0, "summarize only process `PID`")
	fl.IntVar(&tid, "tid", 0, "summarize only thread `TID`")
	fl.BoolVar(&threads, "threads", false, "break every function and edge down by thread, spawns and forks as 0→1")
	fl.BoolVar(&fullNames, "full-names", false, "show function names in full in the tables (json and csv always are)")
	fl.StringVar(&timeKind, "scope", "busy", "times of `KIND` busy (waiting calls' time left out, or the CPU samples' when recorded with them) or wall")
	scopeChoices(c)
	choices(c, "format",
		cobra.CompletionWithDesc("table", "aligned tables"),
		cobra.CompletionWithDesc("markdown", "Markdown tables"),
		cobra.CompletionWithDesc("json", "machine-readable (docs/summary-json.md)"),
		cobra.CompletionWithDesc("csv", "comma-separated values"))
	return c
}
