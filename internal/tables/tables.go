// Package tables writes the titled tables of the human report formats: as
// text for a terminal (tablewriter) and as GitHub-flavoured markdown. A
// report lays its numbers out once as []Table, and both formats show the
// same cells.
package tables

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Kind is how a column's cells are shown.
type Kind uint8

// Column kinds.
const (
	Text   Kind = iota // plain text
	Symbol             // a function name: a code span in markdown
	Number             // right-aligned
)

// Table is one titled table; an empty one shows "(none)". Note, when
// set, is a line after it.
type Table struct {
	Title  string
	Header []string
	Kinds  []Kind // one per column
	Rows   [][]string
	Note   []Span
}

// Span is a piece of a note: text, or a symbol (a code span in markdown).
type Span struct {
	Text   string
	Symbol bool
}

// noteText is t's note as text, or as markdown.
func (t *Table) noteText(markdown bool) string {
	var b strings.Builder
	for _, s := range t.Note {
		switch {
		case !markdown:
			b.WriteString(s.Text)
		case s.Symbol:
			b.WriteString(Code(s.Text))
		default:
			b.WriteString(Escape(s.Text))
		}
	}
	return b.String()
}

// WriteText writes ts as text tables, a blank line between them.
func WriteText(w io.Writer, ts []Table) error {
	for k, t := range ts {
		sep := "\n"
		if k == 0 {
			sep = ""
		}
		if _, err := fmt.Fprintf(w, "%s%s\n", sep, t.Title); err != nil {
			return err
		}
		if len(t.Rows) == 0 {
			if _, err := fmt.Fprintln(w, "  (none)"); err != nil {
				return err
			}
			continue
		}
		align := make([]tw.Align, len(t.Kinds))
		for c, kind := range t.Kinds {
			align[c] = tw.AlignLeft
			if kind == Number {
				align[c] = tw.AlignRight
			}
		}
		cfg := tw.CellAlignment{Global: tw.AlignLeft, PerColumn: align}
		tb := tablewriter.NewTable(w,
			tablewriter.WithRowAlignmentConfig(cfg),
			tablewriter.WithHeaderAlignmentConfig(cfg),
			tablewriter.WithRowAutoWrap(tw.WrapNone),
			tablewriter.WithHeaderAutoWrap(tw.WrapNone),
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithTrimSpace(tw.Off),
		)
		header := make([]any, len(t.Header))
		for c, h := range t.Header {
			header[c] = strings.ToUpper(h)
		}
		tb.Header(header...)
		if err := tb.Bulk(t.Rows); err != nil {
			return err
		}
		if err := tb.Render(); err != nil {
			return err
		}
		if len(t.Note) > 0 {
			if _, err := fmt.Fprintln(w, t.noteText(false)); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteMarkdown writes ts under the level-1 heading title, each table a
// level-2 heading and a pipe table.
func WriteMarkdown(w io.Writer, title string, ts []Table) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", Escape(title))
	for _, t := range ts {
		fmt.Fprintf(&b, "\n## %s\n\n", Escape(t.Title))
		if len(t.Rows) == 0 {
			b.WriteString("(none)\n")
			continue
		}
		b.WriteString("|")
		for _, h := range t.Header {
			fmt.Fprintf(&b, " %s |", Escape(h))
		}
		b.WriteString("\n|")
		for _, k := range t.Kinds {
			if k == Number {
				b.WriteString(" ---: |")
			} else {
				b.WriteString(" --- |")
			}
		}
		b.WriteString("\n")
		for _, row := range t.Rows {
			b.WriteString("|")
			for c, v := range row {
				if t.Kinds[c] == Symbol && v != "-" {
					v = Code(v)
				} else {
					v = Escape(v)
				}
				fmt.Fprintf(&b, " %s |", v)
			}
			b.WriteString("\n")
		}
		if len(t.Note) > 0 {
			fmt.Fprintf(&b, "\n%s\n", t.noteText(true))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Escape escapes the characters markdown would read as markup.
func Escape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune("\\`*_[]<>|#~", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Code makes s a markdown code span, with pipes escaped for a table.
func Code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	if len(fence) > 1 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
