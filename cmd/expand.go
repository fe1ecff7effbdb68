package cmd

import (
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// expandOptions reads --expand FUNC and --depth N: FUNC and the functions
// it can call, found in its code to depth N (profile discover), are traced
// on top of what the filters select. They are found before tracing
// starts: for record in the executable and the libraries it needs, for
// attach in the process's files. What was added is said on w and kept in
// the profile's filters. With --context A>B, the callees (not FUNC) are
// recorded only while A and then B are on the thread's stack; A and B
// are traced too.
func (f *traceFlags) expandOptions(opt *attach.Options, command []string, pid int, w io.Writer) error {
	if len(f.expand) == 0 {
		if f.expandDepth != 1 && f.autoExpand == 0 { // --depth 1 alone is the default: harmless
			return usagef("--depth is how far --expand FUNC or --auto-expand follows callees: give one")
		}
		if f.context != "" {
			return usagef("--context is where --expand FUNC's callees are recorded: give --expand")
		}
		return nil
	}
	var ctx *instrument.Context
	if f.context != "" {
		var err error
		if ctx, err = instrument.ParseContext(f.context); err != nil {
			return usagef("--context: %v", err)
		}
	}
	depth := f.expandDepth
	if depth < 1 {
		return usagef("bad --depth %d: at least 1", depth)
	}
	for _, fn := range f.expand {
		if strings.TrimSpace(fn) == "" {
			return usagef("--expand: empty function name")
		}
	}
	d, err := expandDiscoverer(command, pid, opt.Debug)
	if err != nil {
		return fmt.Errorf("--expand: %w", err)
	}
	var keys []string
	filters := slices.Clone(opt.Meta.Filters)
	for _, fn := range f.expand {
		disc, err := d.Discover(fn, depth)
		if err != nil {
			return fmt.Errorf("--expand: %w", err)
		}
		var added, shown []string
		for _, r := range disc.Functions() {
			added = append(added, r.Key())
			shown = append(shown, r.Display(false))
		}
		keys = append(keys, added...)
		desc := fmt.Sprintf("--expand %s --depth %d", fn, depth)
		if ctx != nil {
			// FUNC itself is traced everywhere; what it calls, in the
			// context only.
			var callees []string
			for _, k := range added {
				if disc.Root.Func == nil || k != disc.Root.Func.Key() {
					callees = append(callees, k)
				}
			}
			ctx.Gate(callees)
			desc += " --context " + ctx.String()
		}
		filters = append(filters, fmt.Sprintf("%s: %s", desc, strings.Join(added, " ")))
		for _, warn := range disc.Warnings {
			fmt.Fprintf(w, "profile: warning: --expand %s: %s\n", fn, warn)
		}
		line := fmt.Sprintf("profile: --expand %s: tracing %s (depth %d)", fn, strings.Join(shown, ", "), depth)
		if ctx != nil {
			line += fmt.Sprintf(", its callees only under %s", ctx)
		}
		if n := disc.IndirectSites(); n > 0 {
			line += fmt.Sprintf("; indirect call sites not followed: %d (profile discover --profile shows the targets a run saw)", n)
		}
		fmt.Fprintln(w, line)
	}
	if opt.Filter, err = opt.Filter.WithFunctions(keys); err != nil {
		return fmt.Errorf("--expand: %w", err)
	}
	opt.Meta.Filters = filters
	opt.Context = ctx
	return nil
}

// expandDiscoverer reads the program to be traced: record's command, or
// the process of attach and top's --pid.
func expandDiscoverer(command []string, pid int, debug *instrument.DebugSearch) (*instrument.Discoverer, error) {
	if pid > 0 {
		return instrument.NewPidDiscoverer(pid, debug)
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command[0], err)
	}
	return instrument.NewExeDiscoverer(path, debug)
}

// autoExpandOptions reads --auto-expand N and --interval D: as the program
// runs, every D the N functions with the most busy self time so far have
// their callees discovered (to --depth levels) and traced from then on.
// Each step is said on w as it happens.
func (f *traceFlags) autoExpandOptions(opt *attach.Options, w io.Writer) error {
	if f.autoExpand == 0 {
		if f.interval != time.Second && f.interval != 0 { // 0: not registered (top)
			return usagef("--interval is how often --auto-expand looks: give --auto-expand")
		}
		return nil
	}
	if f.autoExpand < 0 {
		return usagef("bad --auto-expand %d: at least 1", f.autoExpand)
	}
	if f.interval <= 0 {
		return usagef("bad --interval %s: must be positive", f.interval)
	}
	if f.expandDepth < 1 {
		return usagef("bad --depth %d: at least 1", f.expandDepth)
	}
	opt.Expand.Top, opt.Expand.Every, opt.Expand.Depth = f.autoExpand, f.interval, f.expandDepth
	opt.Expand.Report = func(x attach.Expansion) { fmt.Fprintln(w, expansionLine(x)) }
	opt.Meta.Filters = append(slices.Clone(opt.Meta.Filters),
		fmt.Sprintf("--auto-expand %d --interval %s --depth %d", f.autoExpand, f.interval, f.expandDepth))
	return nil
}

// expansionLine says what one auto-expand step did.
func expansionLine(x attach.Expansion) string {
	head := fmt.Sprintf("profile: %s: --auto-expand: %s (%s self so far)", model.FormatOffset(x.AtNs),
		x.Func, human.Duration(x.SelfNs))
	var what string
	switch {
	case x.Err != nil:
		return fmt.Sprintf("%s: %v", head, x.Err)
	case len(x.Added) > 0:
		what = fmt.Sprintf(": tracing %s from now on", strings.Join(x.Added, ", "))
		if len(x.Unprobed) > 0 {
			what += fmt.Sprintf(" (%s could not be probed)", strings.Join(x.Unprobed, ", "))
		}
	case len(x.Unprobed) > 0:
		what = fmt.Sprintf(": %s could not be probed", strings.Join(x.Unprobed, ", "))
	case x.Traced > 0:
		what = fmt.Sprintf(": its %d callees are traced already", x.Traced)
	default:
		what = ": no callee found in its code"
	}
	return head + what
}
