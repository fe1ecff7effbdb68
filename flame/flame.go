// Package flame draws a profile's calling-context trees as an SVG flame
// graph, in Go, with no external tool: one frame per calling context, the
// root ("all") at the bottom, callers below their callees, widths by total
// time (or self time, or calls), colours by module, and a small inline
// script, as flamegraph.pl's SVGs have, for zooming into a frame and
// searching frames by regular expression.
//
// Frames follow the paths of export's folded stacks: START is left out,
// except for the root's own time (a thread's time outside any traced
// function), which is the top-level frame "START"; the self time of
// contexts removed by prune is a "[pruned]" frame under the context that
// kept it. Identical paths of different threads are one frame with the sum
// of their values, unless Options.Threads makes every thread ("name-tid")
// a top-level frame of its own. The times are the measured ones: a
// profile's CPU samples (record --sample) are not drawn, nor the contexts
// they alone made (model.Node.SampleOnly).
package flame

import (
	"fmt"
	"io"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/model"
)

// Options tune a flame graph.
type Options struct {
	// Value sets the frames' widths: export.Total (the default), Self or
	// Calls. A frame is at least as wide as its own value plus its
	// callees: with Self or Calls its width is the sum of the self times
	// (call counts) of its context and every context below it, as
	// flamegraph.pl makes it from folded stacks; with Total it is the
	// context's total time, where the model keeps one. The model keeps
	// total time on outermost activations only, so a recursive call's
	// inner contexts (and START) are as wide as what they hold; on a
	// recorded profile Total and Self widths are therefore equal.
	Value export.Value
	// Threads makes each thread a top-level frame "name-tid".
	Threads bool
	// Title heads the graph; empty for one made from the profile.
	Title string
	// Width is the image width in pixels; 0 for 1200.
	Width int
	// Color, when set, gives the fill colour (any SVG/CSS colour) of each
	// function frame, START included, instead of the colour of its module:
	// path holds the frame's function indices root first, ending with fn
	// (no thread frame; valid only during the call). A diff colours frames
	// by change through it. The frames "all", the threads' and "[pruned]"
	// keep their greys.
	Color func(path []int, fn int) string
	// FullNames shows full function names on the frames; by default C++
	// and Rust names are shortened (names.Short). The tooltip, which
	// Search matches, always has the full name.
	FullNames bool
	// Scope draws one process's or one thread's contexts only, as the call
	// graph's render.Options.Scope; zero for the whole profile. A scope
	// that matches no thread is an error. A member of a composite thread
	// (merge) is drawn with its own numbers.
	Scope model.Scope
	// Busy draws busy times (model.Profile.Busy): those of the CPU
	// samples where the profile has them, the contexts they alone made
	// (a counted function's) drawn too; else the measured times with the
	// time blocked in waiting calls left out. Otherwise the measured wall
	// times are drawn. A profile imported from a sampling profiler keeps
	// its values either way (model.Profile.Busy).
	Busy bool
}

// DefaultWidth is the image width when Options.Width is 0.
const DefaultWidth = 1200

// MinWidth is the width, in pixels, under which a frame is left out (and
// its callees with it); the subtitle says how many were.
const MinWidth = 0.1

// SVG writes p's flame graph to w.
func SVG(w io.Writer, p *model.Profile, opt Options) error {
	if opt.Value == "" {
		opt.Value = export.Total
	}
	if _, err := export.ParseValue(string(opt.Value)); err != nil {
		return fmt.Errorf("flame graph: %w", err)
	}
	if opt.Value == export.Calls && p.Meta.Sampled() {
		return fmt.Errorf("flame graph: the profile's values are %s: draw it by total or self time", p.Meta.Values())
	}
	if opt.Width == 0 {
		opt.Width = DefaultWidth
	}
	if opt.Width < 100 {
		return fmt.Errorf("flame graph: width %d px is too narrow (at least 100)", opt.Width)
	}
	if err := p.CheckScope(opt.Scope); err != nil {
		return fmt.Errorf("flame graph: %w", err)
	}
	if opt.Busy && opt.Value != export.Calls {
		p = p.Busy()
	}
	ths := scopeThreads(p, opt.Scope)
	root := buildFrames(p, ths, opt)
	d := &drawer{p: p, opt: opt, threads: ths}
	d.layout(root)
	if err := d.write(w); err != nil {
		return fmt.Errorf("flame graph: %w", err)
	}
	return nil
}
