// Package discover presents the callee trees instrument.Discover finds
// (profile discover): an indented table and a JSON document
// (docs/discover.md).
package discover

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/profile-dev/profile/instrument"
)

// Options are the presentation's choices.
type Options struct {
	FullNames bool // C++/Rust names in full in the text (JSON always has them)
}

// maxSites is how many call sites a text row lists; JSON has them all.
const maxSites = 4

// WriteText writes the tree as a table, one row per callee indented under
// its caller:
//
//	C in callees at 0x1290 (79 bytes), depth 1: 3 functions, 1 indirect call site
//
//	LEVEL  CALLEE          KIND      SITES        NOTE
//	1      x               direct    +0xa
//	1      (through rax)   indirect  +0x32        observed: z ×50
//	1      libc.so.6:puts  plt       +0x3e
func WriteText(w io.Writer, d *instrument.Discovery, o Options) error {
	r := d.Root
	fn := r.Func
	fmt.Fprintf(w, "%s in %s at %#x (%d bytes), depth %d: %s, %s\n", fn.Display(o.FullNames), fn.Module, fn.Addr, fn.Size,
		d.Depth, plural(len(d.Functions())-1, "function"), plural(d.IndirectSites(), "indirect call site"))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if len(r.Callees) == 0 {
		fmt.Fprintln(w, "\nno calls")
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LEVEL\tCALLEE\tKIND\tSITES\tNOTE")
	var walk func(c *instrument.Callee)
	walk = func(c *instrument.Callee) {
		fmt.Fprintf(tw, "%d\t%s%s\t%s\t%s\t%s\n", c.Level, strings.Repeat("  ", c.Level-1), calleeName(c, o),
			kindText(c), sitesText(c.Sites), strings.Join(notes(c, o), "; "))
		for _, k := range c.Callees {
			walk(k)
		}
	}
	for _, c := range r.Callees {
		walk(c)
	}
	return tw.Flush()
}

func calleeName(c *instrument.Callee, o Options) string {
	if c.Func == nil {
		return "(through " + c.Operand + ")"
	}
	return c.Func.Display(o.FullNames)
}

// kindText is the kind with "tail" for a jump: "direct", "tail plt", ...
func kindText(c *instrument.Callee) string {
	switch {
	case !c.Tail:
		return string(c.Kind)
	case c.Kind == instrument.CalleeDirect:
		return "tail"
	}
	return "tail " + string(c.Kind)
}

// SiteText is a site as "+0x1f", or "f.cold+0x5" in a split-off part.
func SiteText(s instrument.Site) string {
	return fmt.Sprintf("%s+%#x", s.Part, s.Offset)
}

func sitesText(sites []instrument.Site) string {
	var parts []string
	for i, s := range sites {
		if i == maxSites {
			parts = append(parts, fmt.Sprintf("(%d more)", len(sites)-maxSites))
			break
		}
		parts = append(parts, SiteText(s))
	}
	return strings.Join(parts, " ")
}

// notes are what a row says besides its columns: observed targets, why it
// was not expanded, what its code or the profile showed.
func notes(c *instrument.Callee, o Options) []string {
	var out []string
	if c.ObservedKnown {
		if len(c.Observed) == 0 {
			out = append(out, "observed: none")
		} else {
			var obs []string
			for _, t := range c.Observed {
				obs = append(obs, fmt.Sprintf("%s ×%d", t.Func.Display(o.FullNames), t.Calls))
			}
			s := "observed: " + strings.Join(obs, ", ")
			if c.ObservedShared {
				s += " (from any of the caller's indirect sites)"
			}
			out = append(out, s)
		}
	}
	if c.Expanded && len(c.Callees) == 0 {
		out = append(out, "calls nothing")
	}
	if c.Repeat {
		out = append(out, fmt.Sprintf("expanded at level %d", c.RepeatOf))
	}
	if c.Why != "" {
		out = append(out, "not expanded: "+c.Why)
	}
	return append(out, c.Notes...)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
