package cmd

import (
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/instrument"
)

// expandOptions reads --expand FUNC and --depth N: FUNC and the functions
// it can call, found in its code to depth N (profile discover), are traced
// on top of what the filters select. They are found before tracing
// starts: for record in the executable and the libraries it needs, for
// attach in the process's files. What was added is said on w and kept in
// the profile's filters.
func (f *traceFlags) expandOptions(opt *attach.Options, command []string, pid int, w io.Writer) error {
	if len(f.expand) == 0 {
		if f.expandDepth != 1 { // --depth 1 alone is the default: harmless
			return usagef("--depth is how far --expand FUNC follows callees: give --expand")
		}
		return nil
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
	d, err := expandDiscoverer(command, pid)
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
		filters = append(filters, fmt.Sprintf("--expand %s --depth %d: %s", fn, depth, strings.Join(added, " ")))
		for _, warn := range disc.Warnings {
			fmt.Fprintf(w, "profile: warning: --expand %s: %s\n", fn, warn)
		}
		line := fmt.Sprintf("profile: --expand %s: tracing %s (depth %d)", fn, strings.Join(shown, ", "), depth)
		if n := disc.IndirectSites(); n > 0 {
			line += fmt.Sprintf("; indirect call sites not followed: %d (profile discover --profile shows the targets a run saw)", n)
		}
		fmt.Fprintln(w, line)
	}
	if opt.Filter, err = opt.Filter.WithFunctions(keys); err != nil {
		return fmt.Errorf("--expand: %w", err)
	}
	opt.Meta.Filters = filters
	return nil
}

// expandDiscoverer reads the program to be traced: record's command, or
// the process of attach and top's --pid.
func expandDiscoverer(command []string, pid int) (*instrument.Discoverer, error) {
	if pid > 0 {
		return instrument.NewPidDiscoverer(pid)
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command[0], err)
	}
	return instrument.NewExeDiscoverer(path)
}
