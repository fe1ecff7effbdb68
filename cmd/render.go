package cmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/flame"
	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/render"
)

func newRenderCmd() *cobra.Command {
	var (
		svg, dot, png, flameGraph, threads bool
		fullNames                          bool
		out, hot, warm, title, value       string
		diffBase, edgeFrac, timeKind       string
		shareKind                          string
		pid, tid, nodeCount                int
	)
	c := &cobra.Command{
		Use:   "render FILE",
		Short: "Draw a profile's annotated call graph as SVG, PNG or DOT, or its flame graph",
		Long: `render draws the function-level call graph of a profile: nodes carry their
self and total (inclusive) time with their shares and calls, edges their
calls and total time, "recursive" or rc=N for recursive calls. Only the
--nodecount functions of largest total time (80) and, in a graph too large to
draw whole, the call edges carrying at least --edgefraction of the time (0.1%)
are drawn; the title says what was left out. Times are busy time (--scope busy): the time in waiting calls
(pthread_cond_wait, read, epoll_wait, ...) is left out and those calls are
filled blue-grey; --scope wall keeps it. A profile recorded with CPU samples (record's default) has
its busy times from the CPU samples, waiting calls' CPU time included (the
title says how they were sampled). Nodes are filled pale to red by their
self share (red from --hot, orange from --warm), with larger fonts; --share
thread makes shares of one thread's time. Spawn edges are dashed, fork
edges dotted, elided edges of a pruned profile bold with a leading "…".
--threads dissects every edge by thread and labels spawns "0→1" (thread 0
spawned thread 1); the legend maps thread numbers to tids. C++ and Rust
names are shortened in labels ("std::vector<…>::push_back"), the tooltip
keeping the full name; --full-names labels with full names.

The output goes next to FILE with the format's extension (profile.data ->
profile.svg) unless -o names a file, or -o - for standard output. SVG and PNG
are laid out by Graphviz's dot, embedded: no Graphviz install is needed.

--flame draws an SVG flame graph instead (docs/flame.md): one frame per
calling context, callees above their callers, widths by --value total (the
default), self or calls, of busy time as the call graph's (--scope busy:
the CPU samples' times where the profile has them, else the measured times
with waiting calls' time left out; --scope wall: measured wall time),
colours by module. In a browser, click a frame to zoom into it, Search highlights
frames matching a regular expression.
--threads gives each thread its own frame ("name-tid"), --title heads it;
--tid and --pid draw one thread or process, as for the call graph.
It goes to profile.flame.svg, beside the call graph's profile.svg.`,
		Example: `  profile render profile.data --svg
  profile render profile.data --png --hot 20% --warm 5% -o graph.png
  profile render profile.data --flame --tid 4243
  profile render new.data --svg --diff base.data`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: profileArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if flameGraph {
				for _, f := range []string{"hot", "warm", "nodecount", "edgefraction", "share"} {
					if c.Flags().Changed(f) {
						return usagef("--%s is for the call graph, not --flame", f)
					}
				}
				v, err := export.ParseValue(value)
				if err != nil {
					return usagef("bad --value: %w", err)
				}
				busy, err := busyScope(timeKind)
				if err != nil {
					return err
				}
				if err := checkScope(pid, tid); err != nil {
					return err
				}
				return renderFlame(c, args[0], out, diffBase, flame.Options{Value: v, Threads: threads, Title: title,
					FullNames: fullNames, Busy: busy, Scope: model.Scope{Pid: pid, Tid: tid}})
			}
			if c.Flags().Changed("value") {
				return usagef("--value is for --flame")
			}
			format := "svg"
			switch {
			case dot:
				format = "dot"
			case png:
				format = "png"
			}
			var opt render.Options
			var err error
			if opt.Hot, err = human.ParseFraction(hot); err != nil {
				return usagef("bad --hot: %w", err)
			}
			if opt.Warm, err = human.ParseFraction(warm); err != nil {
				return usagef("bad --warm: %w", err)
			}
			if err := checkScope(pid, tid); err != nil {
				return err
			}
			if opt.Warm > opt.Hot {
				return usagef("bad --warm %s: it must not exceed --hot %s", warm, hot)
			}
			if opt.Hot == 0 { // DOT reads 0 as the default
				opt.Hot = 1e-12
			}
			if opt.Warm == 0 {
				opt.Warm = 1e-12
			}
			if err := renderScale(&opt, nodeCount, edgeFrac, timeKind, shareKind); err != nil {
				return err
			}
			if !c.Flags().Changed("edgefraction") {
				opt.EdgeFraction = 0 // render's default: only a graph too large to draw whole loses edges
			}
			opt.Threads, opt.Title, opt.Scope = threads, title, model.Scope{Pid: pid, Tid: tid}
			opt.FullNames = fullNames
			if out, err = outputPath(args[0], out, format); err != nil {
				return err
			}
			p, err := readProfile(args[0])
			if err != nil {
				return err
			}
			if opt.Diff, err = diffFrom(diffBase, p, !opt.Wall); err != nil {
				return err
			}
			if err := p.CheckScope(opt.Scope); err != nil {
				return &usageError{err}
			}
			data, err := render.DOT(p, opt)
			if err != nil {
				return err
			}
			ctx := c.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			switch format {
			case "svg":
				data, err = render.SVG(ctx, data)
			case "png":
				data, err = render.PNG(ctx, data)
			}
			if err != nil {
				return err
			}
			return emitBytes(c, out, data)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&svg, "svg", false, "write SVG (the default)")
	fl.BoolVar(&dot, "dot", false, "write Graphviz DOT")
	fl.BoolVar(&png, "png", false, "write a PNG image")
	fl.BoolVar(&flameGraph, "flame", false, "write an SVG flame graph (profile.data -> profile.flame.svg)")
	c.MarkFlagsMutuallyExclusive("svg", "dot", "png", "flame")
	fl.StringVar(&value, "value", "total", "--flame: frame widths by `VALUE`: total (ns), self (ns) or calls")
	fl.StringVarP(&out, "output", "o", "", "write to `FILE`, - for standard output (default: FILE with the format's extension)")
	fl.StringVar(&hot, "hot", "10%", "fill functions with at least `PCT` of the time in their own code red (the heat scale's end)")
	fl.StringVar(&warm, "warm", "3%", "fill functions with at least `PCT` of the time in their own code orange (the scale's middle)")
	fl.IntVar(&nodeCount, "nodecount", render.DefaultNodeCount, "draw the `N` functions of largest total time, 0 for all")
	fl.StringVar(&edgeFrac, "edgefraction", "0.1%", "drop call edges under `PCT` of the time, 0 for none (by default only when functions were left out)")
	fl.StringVar(&timeKind, "scope", "busy", "times of `KIND` busy (waiting calls' time left out, or the CPU samples' when recorded with them) or wall")
	fl.StringVar(&shareKind, "share", "scope", "shares of `KIND` scope (all threads' time) or thread (one thread's, the largest)")
	fl.BoolVar(&threads, "threads", false, "dissect edges by thread, label spawns and forks 0→1")
	fl.BoolVar(&fullNames, "full-names", false, "label nodes and frames with full function names (tooltips always have them)")
	fl.StringVar(&diffBase, "diff", "", "colour functions by change from the base profile `FILE` as a share of the time: red slower, blue faster, grey under 0.1% (docs/diff.md)")
	fl.StringVar(&title, "title", "", "graph `TITLE` (default: the executable, traced time and threads)")
	fl.IntVar(&pid, "pid", 0, "draw only process `PID`")
	fl.IntVar(&tid, "tid", 0, "draw only thread `TID`")
	completeFlag(c, "diff", profileArgs(-1))
	choices(c, "value", valueChoices...)
	scopeChoices(c)
	choices(c, "share", cobra.CompletionWithDesc("scope", "of all the scope's threads' time"),
		cobra.CompletionWithDesc("thread", "of one thread's time, where the share is largest"))
	return c
}

// renderScale reads the flags of a large drawing into opt: --nodecount
// and --edgefraction (0: no limit), --scope busy|wall, --share
// scope|thread.
func renderScale(opt *render.Options, nodeCount int, edgeFrac, timeKind, shareKind string) error {
	if nodeCount < 0 {
		return usagef("bad --nodecount %d: give a number of functions, 0 for all", nodeCount)
	}
	opt.NodeCount = cmp.Or(nodeCount, -1) // render reads 0 as its default
	f, err := human.ParseFraction(edgeFrac)
	if err != nil {
		return usagef("bad --edgefraction: %w", err)
	}
	opt.EdgeFraction = cmp.Or(f, -1)
	busy, err := busyScope(timeKind)
	if err != nil {
		return err
	}
	opt.Wall = !busy
	switch shareKind {
	case "scope", "thread":
		opt.ThreadShare = shareKind == "thread"
	default:
		return usagef("bad --share %q: give scope or thread", shareKind)
	}
	return nil
}

// renderFlame writes the flame graph of the profile at path, to
// path.flame.svg by default: path.svg is the call graph's.
func renderFlame(c *cobra.Command, path, out, diffBase string, opt flame.Options) error {
	out, err := outputPath(path, out, "flame.svg")
	if err != nil {
		return err
	}
	p, err := readProfile(path)
	if err != nil {
		return err
	}
	if err := p.CheckScope(opt.Scope); err != nil {
		return &usageError{err}
	}
	r, err := diffFrom(diffBase, p, opt.Busy)
	if err != nil {
		return err
	}
	if r != nil {
		opt.Color = func(_ []int, fn int) string { return r.FuncColor(p, fn) }
	}
	return emit(c, out, func(w io.Writer) error { return flame.SVG(w, p, opt) })
}

// diffFrom compares p with the base profile at path for --diff, their
// busy times or wall times as drawn (the colours are shares of them); nil
// without one.
func diffFrom(path string, p *model.Profile, busy bool) (*diff.Result, error) {
	if path == "" {
		return nil, nil
	}
	base, err := readProfile(path)
	if err != nil {
		return nil, fmt.Errorf("--diff: %w", err)
	}
	if busy {
		return diff.CompareBusy(base, p)
	}
	return diff.Compare(base, p)
}

// renderedName is path with its extension replaced by format's:
// profile.data -> profile.svg, out/run1 -> out/run1.svg.
func renderedName(path, format string) string {
	base := filepath.Base(path)
	if ext := filepath.Ext(base); ext != "" && ext != base {
		path = strings.TrimSuffix(path, ext)
	}
	return path + "." + format
}

// busyScope reads a --scope flag: busy (the time blocked in waiting calls
// left out) or wall.
func busyScope(kind string) (bool, error) {
	switch kind {
	case "busy", "wall":
		return kind == "busy", nil
	}
	return false, usagef("bad --scope %q: give busy or wall", kind)
}

func scopeChoices(c *cobra.Command) {
	choices(c, "scope", cobra.CompletionWithDesc("busy", "waiting calls' time left out"),
		cobra.CompletionWithDesc("wall", "all traced time"))
}
