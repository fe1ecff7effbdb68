package cmd

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

func newInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info FILE",
		Short: "Show a profile's metadata, processes, threads and sizes",
		Example: `  profile info profile.data
  profile info merged.data`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: profileArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := readProfile(args[0])
			if err != nil {
				return err
			}
			return writeInfo(c.OutOrStdout(), p)
		},
	}
}

func writeInfo(out io.Writer, p *model.Profile) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	m := p.Meta
	fmt.Fprintf(w, "tool version\t%s\n", m.ToolVersion)
	fmt.Fprintf(w, "mode\t%s\n", m.Mode)
	fmt.Fprintf(w, "command\t%s\n", strings.Join(m.Command, " "))
	fmt.Fprintf(w, "exe\t%s\n", m.StartedAs())
	if m.BuildID != "" {
		fmt.Fprintf(w, "build id\t%s\n", m.BuildID)
	}
	if m.StartUnixNs != 0 {
		fmt.Fprintf(w, "started\t%s\n", time.Unix(0, m.StartUnixNs).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "duration\t%s\n", time.Duration(m.DurationNs))
	partial := "no"
	if m.Partial {
		partial = "yes: " + m.PartialReason
	}
	fmt.Fprintf(w, "partial\t%s\n", partial)
	if m.Detached {
		// Said apart from partial: the window traced is complete.
		fmt.Fprintf(w, "ended\tdetached (the target went on running)\n")
	}
	fmt.Fprintf(w, "values\t%s\n", m.Values())
	if c := m.Crash; c != nil {
		fmt.Fprintf(w, "crash\t%s in pid %d tid %d at %#x\n", c.Signal, c.Pid, c.Tid, c.Addr)
		for _, f := range c.Stack {
			fmt.Fprintf(w, "\t  %s\n", f)
		}
	}
	for _, f := range []struct {
		name string
		vals []string
	}{{"filters", m.Filters}, {"excludes", m.Excludes}, {"libs", m.Libs}, {"sources", m.Sources}} {
		if len(f.vals) > 0 {
			fmt.Fprintf(w, "%s\t%s\n", f.name, strings.Join(f.vals, ", "))
		}
	}
	// One a line: a warning is a sentence, commas and all.
	for i, warning := range m.Warnings {
		name := ""
		if i == 0 {
			name = "warnings"
		}
		fmt.Fprintf(w, "%s\t%s\n", name, warning)
	}
	if m.Stops > 0 {
		fmt.Fprintf(w, "stops\t%d (%d traced calls, %d breakpoints, %s per stop)\n",
			m.Stops, m.TracedCalls, m.Breakpoints, time.Duration(m.StopOverheadNs))
	}
	fmt.Fprintf(w, "probe cost\t%s\n", calibrationLine(m.Calibration))
	if c := m.CPUSamples; c != nil {
		// What summary and render show as busy time: said with the probes' cost.
		fmt.Fprintf(w, "busy times\tsampled: %s\n", c)
	}
	if m.Detail != nil {
		fmt.Fprintf(w, "detail\t%s\n", detailLine(p))
	}
	nodes := 0
	for _, t := range p.Threads {
		nodes += len(t.Nodes)
	}
	fmt.Fprintf(w, "size\t%d functions, %d modules, %d CCT nodes\n", len(p.Functions)-1, len(p.Modules)-1, nodes)
	for _, md := range p.Modules[1:] {
		switch {
		case md.DynamicOnly:
			fmt.Fprintf(w, "module\t%s: no symbol table, traced through its dynamic symbols only\n", md.Path)
		case md.SymbolsFrom != "":
			fmt.Fprintf(w, "module\t%s: symbols from %s\n", md.Path, md.SymbolsFrom)
		default:
			fmt.Fprintf(w, "module\t%s: symbols from the file itself\n", md.Path)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nprocesses (%d)\n", len(p.Processes))
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  PID\tPARENT\tFORKED BY\tEXE\tEND")
	replaced := map[int]bool{}
	for _, pr := range p.Processes {
		if pr.ExecOf != model.None {
			replaced[pr.ExecOf] = true
		}
	}
	for i, pr := range p.Processes {
		end := processEnd(pr)
		if replaced[i] {
			end = "exec"
		}
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\t%s\n", pr.Pid, parentPid(pr), forkedBy(p, pr), pr.StartedAs(), end)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nthreads (%d)\n", len(p.Threads))
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  TID\tPID\tNAME\tPARENT\tSPAWNED BY\tLEVEL\tTRACED\tNODES")
	for _, t := range p.Threads {
		parent := "-"
		if t.ParentTid != 0 {
			parent = fmt.Sprint(t.ParentTid)
		}
		fmt.Fprintf(w, "  %d\t%d\t%s\t%s\t%s\t%d\t%s\t%d\n", t.Tid, p.Processes[t.Process].Pid, t.Name, parent,
			funcOrDash(p, t.SpawnedBy), t.Level, time.Duration(t.TracedNs), len(t.Nodes))
		if len(t.Members) > 0 {
			fmt.Fprintf(w, "  \t\t(composite of %d threads)\t\t\t\t\t\n", len(t.Members))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := writeTracedLater(out, p); err != nil {
		return err
	}
	return writeNotInline(out, p, "\nfunctions without an inline probe", 0)
}

// writeTracedLater lists the functions whose tracing began after the start
// (record --auto-expand): their counts cover the run from then on. Nothing
// when every function was traced from the start.
func writeTracedLater(out io.Writer, p *model.Profile) error {
	later := p.TracedLater()
	if len(later) == 0 {
		return nil
	}
	fmt.Fprintf(out, "\ntraced from later in the run (%d)\n", len(later))
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, f := range later {
		fmt.Fprintf(w, "  %s\t%s\n", model.FormatOffset(p.Functions[f].TracedSinceNs), p.FuncName(f))
	}
	return w.Flush()
}

func parentPid(pr model.Process) string {
	if pr.ParentPid == 0 {
		return "-"
	}
	return fmt.Sprint(pr.ParentPid)
}

func forkedBy(p *model.Profile, pr model.Process) string {
	switch {
	case pr.ExecOf != model.None:
		return "(exec)"
	case pr.ForkedBy == model.None:
		return "-"
	}
	return fmt.Sprintf("%s (tid %d)", p.FuncName(pr.ForkedBy), pr.ForkedByTid)
}

func funcOrDash(p *model.Profile, f int) string {
	if f == model.None {
		return "-"
	}
	return p.FuncName(f)
}

func processEnd(pr model.Process) string {
	switch {
	case pr.Signal != "":
		return "killed by " + pr.Signal
	case pr.Exited:
		return fmt.Sprintf("exit %d", pr.ExitCode)
	}
	return "running"
}

// calibrationLine says what one traced call cost per probe kind and what
// was taken out of the times.
// detailLine is the detail rule and what it kept: "--detail handle_request
// --slow 10ms: 7 trees (0 dropped)".
func detailLine(p *model.Profile) string {
	r := p.Meta.Detail
	rule := "--detail " + r.Funcs
	if r.SlowNs > 0 {
		rule += " --slow " + time.Duration(r.SlowNs).String()
	}
	if r.If != "" {
		rule += " --detail-if '" + r.If + "'"
	}
	var trees, dropped int64
	for _, t := range p.Threads {
		trees += int64(len(t.Trees))
		dropped += t.DroppedTrees
	}
	return fmt.Sprintf("%s --detail-limit %d: %d trees (%d dropped)", rule, r.Limit, trees, dropped)
}

// calibrationLine says what the probes cost and what was taken out of the
// times, by probe kind: the inline probes' measured cost per call, the
// trap probes' stops (each measured as it happened: their count and
// average), the set-up holds, and their sum.
func calibrationLine(c *model.Calibration) string {
	if c == nil {
		return "not measured: times include the probes' cost (--no-compensate, or an older or imported profile)"
	}
	var kinds []string
	for _, k := range []struct {
		name string
		cost model.ProbeCost
	}{{"inline", c.Inline}, {"trap", c.Trap}} {
		if k.cost != (model.ProbeCost{}) {
			kinds = append(kinds, fmt.Sprintf("%s %s in the callee + %s in the caller", k.name,
				human.Duration(k.cost.InNs), human.Duration(k.cost.OutNs)))
		}
	}
	s := strings.Join(kinds, "; ")
	if s != "" {
		s += " per call"
	}
	if c.Stops > 0 {
		if s != "" {
			s += "; "
		}
		s += "trap stops measured one by one"
	}
	if c.Host != "" {
		s += " on " + c.Host
	}
	if !c.Compensated {
		return s + "; not taken out of the times (not in every merged run)"
	}
	if c.Stops == 0 {
		return s + fmt.Sprintf("; taken out: %s of probes, %s of set-up", human.Duration(c.SubtractedNs), human.Duration(c.HeldNs))
	}
	return s + fmt.Sprintf("; taken out: %s of inline probes + %s of trap stops (%d × %s) + %s of set-up = %s",
		human.Duration(c.SubtractedNs), human.Duration(c.StopNs), c.Stops, human.Duration(c.StopNs/c.Stops),
		human.Duration(c.HeldNs), human.Duration(c.SubtractedNs+c.StopNs+c.HeldNs))
}
