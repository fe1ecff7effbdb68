package cmd

import (
	"bufio"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/diff"
)

func newDiffCmd() *cobra.Command {
	var (
		format, sortBy string
		top            int
		failOn         []string
		fullNames      bool
		perCall        bool
		timeKind       string
		noise          string
	)
	c := &cobra.Command{
		Use:   "diff BASE NEW",
		Short: "Compare two profiles function by function and edge by edge; fail on a regression",
		Long: `diff compares a new profile with a base one: for every function its calls,
self and total time on both sides, the change and the relative change; the
same for every edge (calls and total). Functions are matched by module base
name and symbol, so two builds in different directories line up; a function
in one profile only has zeros on the other side. Times are busy time
(--scope busy, as summary's and render's: the CPU samples' where a profile
has them, else measured less the time in waiting calls) or, with --scope
wall, the measured wall times. Rows are sorted by the
largest change of self time (--sort), all of them unless --top. The text
report fits 120 columns: it shows new values and changes, names shortened
and, where still too long, cut in the middle.

--per-call compares times per call (self/call, total/call) instead of
totals: a run that did twice the work at the same speed shows no change.
--noise AMOUNT (default 0.1% of the larger profile's traced time; a time
such as 500us; 0 for none): a change of time under it is never listed and
breaks no gate, and a relative change from a base under it shows as "new".

--fail-on EXPR (repeatable) is a gate for CI: the functions that break one
are named on stderr, the 10 worst and a count of the rest, and the exit
status is 1 (0 when none does, 2 for bad
input: a bad expression, a profile that cannot be read). EXPR is
[func~REGEX:]METRIC>+AMOUNT or METRIC<-AMOUNT, conditions joined by &:
  self>+10%            self time grew by more than 10% of the base's
  calls>+1000          more than 1000 calls more
  total>+5ms           total time grew by more than 5ms
  self<-50%            self time shrank by more than half
  self>+10%&self>+1ms  both: small functions' times vary from run to run
  self/call>+20%       self time per call grew by more than 20%
  func~^parse:self>+10%  only functions whose name matches ^parse
REGEX matches the full name; the tables shorten C++ and Rust names
("std::vector<…>::push_back") unless --full-names.
See docs/diff.md; --format json is the machine-readable form.`,
		Example: `  profile diff base.data new.data
  profile diff base.data new.data --fail-on 'self>+10%&self>+5ms'
  profile diff base.data new.data --per-call --fail-on 'self/call>+20%'
  profile diff base.data new.data --format json > diff.json`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: profileArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			write, ok := diff.Writer(format)
			if !ok {
				return usagef("unknown --format %q: use text, markdown or json", format)
			}
			key, err := diff.ParseSort(sortBy)
			if err != nil {
				return usagef("bad --sort: %w", err)
			}
			if top < 0 {
				return usagef("bad --top %d: must not be negative", top)
			}
			busy, err := busyScope(timeKind)
			if err != nil {
				return err
			}
			floor, err := diff.ParseNoise(noise)
			if err != nil {
				return usagef("bad --noise: %w", err)
			}
			var gates []*diff.Gate
			for _, expr := range failOn {
				g, err := diff.ParseGate(expr)
				if err != nil {
					return usagef("bad --fail-on: %w", err)
				}
				gates = append(gates, g)
			}
			// Exit status 1 says a gate broke: input that cannot be read or
			// compared is bad input, status 2, like a bad expression.
			base, err := readProfile(args[0])
			if err != nil {
				return &usageError{err}
			}
			newer, err := readProfile(args[1])
			if err != nil {
				return &usageError{err}
			}
			compare := diff.Compare
			if busy {
				compare = diff.CompareBusy
			}
			res, err := compare(base, newer)
			if err != nil {
				return &usageError{err}
			}
			rep, err := res.Report(diff.Options{BaseName: args[0], NewName: args[1], Sort: key, Top: top, Gates: gates,
				FullNames: fullNames, PerCall: perCall, Noise: floor})
			if err != nil {
				return &usageError{err}
			}
			w := bufio.NewWriter(c.OutOrStdout())
			if err := write(w, rep); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, line := range rep.Messages() {
				fmt.Fprintf(c.ErrOrStderr(), "profile: diff: %s\n", line)
			}
			if len(rep.Breaches) > 0 {
				return &exitError{1}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&format, "format", "text", "output `FORMAT`: text, markdown or json")
	fl.StringVar(&sortBy, "sort", "self", "sort rows by the largest change of `COLUMN`: self, total or calls; or by name")
	fl.IntVar(&top, "top", 0, "list only the first `N` functions and edges (0: all; gates check every function)")
	fl.StringArrayVar(&failOn, "fail-on", nil, "exit 1 naming every function that breaks gate `EXPR` (repeatable; see above)")
	fl.BoolVar(&fullNames, "full-names", false, "show function names in full in the tables and gate messages (json always does)")
	fl.BoolVar(&perCall, "per-call", false, "compare times per call (self/call, total/call) instead of totals")
	fl.StringVar(&noise, "noise", diff.DefaultNoise, "ignore changes of time under `AMOUNT`: a share of the larger profile's traced time, a time (100us), or 0 for none")
	fl.StringVar(&timeKind, "scope", "busy", "compare times of `KIND` busy (waiting calls' time left out, or the CPU samples' when recorded with them) or wall")
	scopeChoices(c)
	choices(c, "format",
		cobra.CompletionWithDesc("text", "aligned tables"),
		cobra.CompletionWithDesc("markdown", "Markdown tables"),
		cobra.CompletionWithDesc("json", "machine-readable"))
	choices(c, "sort",
		cobra.CompletionWithDesc(string(diff.SortSelf), "largest change of self time"),
		cobra.CompletionWithDesc(string(diff.SortTotal), "largest change of total time"),
		cobra.CompletionWithDesc(string(diff.SortCalls), "largest change of calls"),
		cobra.CompletionWithDesc(string(diff.SortName), "function name"))
	return c
}
