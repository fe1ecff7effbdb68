package cmd

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/instrument"
)

// funcList is a repeatable flag of function names (symbol or
// module:symbol), taken whole: C++ names have commas.
type funcList []string

func (l *funcList) String() string { return strings.Join(*l, " ") }
func (l *funcList) Type() string   { return "funcs" }

func (l *funcList) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty function name")
	}
	*l = append(*l, s)
	return nil
}

// expandOptions reads --expand FUNC and --depth N: FUNC and the functions
// it can call, found in its code to depth N (profile discover), are traced
// on top of what the filters select. They are found before tracing
// starts: for record in the executable and the libraries it needs, for
// attach in the process's files. What was added is said on w and kept in
// the profile's filters.
func (f *traceFlags) expandOptions(opt *attach.Options, mode string, command []string, w io.Writer) error {
	if len(f.expand) == 0 {
		if f.flags != nil && f.flags.Changed("depth") {
			return usagef("--depth is how far --expand FUNC follows callees: give --expand")
		}
		return nil
	}
	if f.expandDepth < 1 {
		return usagef("bad --depth %d: at least 1", f.expandDepth)
	}
	d, err := f.expandDiscoverer(mode, command)
	if err != nil {
		return fmt.Errorf("--expand: %w", err)
	}
	var keys []string
	filters := slices.Clone(opt.Meta.Filters)
	for _, fn := range f.expand {
		disc, err := d.Discover(fn, f.expandDepth)
		if err != nil {
			return fmt.Errorf("--expand: %w", err)
		}
		var added, shown []string
		for _, r := range disc.Functions() {
			added = append(added, r.Key())
			shown = append(shown, r.Display(false))
		}
		keys = append(keys, added...)
		filters = append(filters, fmt.Sprintf("--expand %s --depth %d: %s", fn, f.expandDepth, strings.Join(added, " ")))
		for _, warn := range disc.Warnings {
			fmt.Fprintf(w, "profile: warning: --expand %s: %s\n", fn, warn)
		}
		line := fmt.Sprintf("profile: --expand %s: tracing %s (depth %d)", fn, strings.Join(shown, ", "), f.expandDepth)
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
func (f *traceFlags) expandDiscoverer(mode string, command []string) (*instrument.Discoverer, error) {
	if mode == "record" {
		path, err := exec.LookPath(command[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", command[0], err)
		}
		return instrument.NewExeDiscoverer(path)
	}
	pid, err := f.flags.GetInt("pid")
	if err != nil {
		return nil, err
	}
	return instrument.NewPidDiscoverer(pid)
}
