package cmd

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/profile-dev/profile/model"
)

// writeNotInline lists the functions the tracer could not give an inline
// probe (model.NotInline), at most limit of them (0: all), under title;
// nothing when there are none. --stats and info share it.
func writeNotInline(out io.Writer, p *model.Profile, title string, limit int) error {
	rows := p.NotInline()
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(out, "%s (%d)\n", title, len(rows))
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  PROBE\tCALLS\tFUNCTION\tWHY")
	more := 0
	if limit > 0 && len(rows) > limit {
		rows, more = rows[:limit], len(rows)-limit
	}
	for _, r := range rows {
		kind := r.Probe.String()
		if r.UntilNs > 0 {
			kind += " until " + model.FormatOffset(r.UntilNs)
		}
		fmt.Fprintf(w, "  %s\t%d\t%s\t%s\n", kind, r.Calls, p.FuncName(r.Func), r.Note)
	}
	if err := w.Flush(); err != nil || more == 0 {
		return err
	}
	_, err := fmt.Fprintf(out, "  … %d more (profile info lists them all)\n", more)
	return err
}
