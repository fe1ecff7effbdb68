package render

import (
	"strings"
	"unicode/utf8"
)

// Labels that fit their boxes: Graphviz sizes a box from its own estimate
// of the font's widths, which a browser's font may exceed, so that text
// overflows the box. Each box is given a width of its own here, from a
// generous estimate of its widest line (charWidth em per character, more
// than any common sans-serif font's average), and long names are wrapped
// so that no box grows very wide.

const (
	charWidth = 0.62 // em per character: wider than Helvetica, Arial, Liberation or DejaVu Sans average
	boxMargin = 0.2  // inches of padding left and right together
	wrapAt    = 40   // characters per line of a long name
)

// textWidth estimates the width in points of a line at size pt.
func textWidth(line string, size float64) float64 {
	return float64(utf8.RuneCountInString(line)) * size * charWidth
}

// boxWidth is the width in inches of a box holding lines at size pt.
func boxWidth(lines []string, size float64) float64 {
	w := 0.0
	for _, l := range lines {
		w = max(w, textWidth(l, size))
	}
	return w/72 + boxMargin
}

// wrapName splits a long name into lines of at most wrapAt characters,
// breaking after a scope ("::"), a comma, an opening bracket or a space
// where it can, anywhere where it cannot.
func wrapName(name string) []string {
	var out []string
	for utf8.RuneCountInString(name) > wrapAt {
		r := []rune(name)
		cut := 0
		for i := wrapAt; i >= wrapAt/2; i-- {
			if isBreak(r, i) {
				cut = i
				break
			}
		}
		if cut == 0 {
			cut = wrapAt
		}
		out = append(out, strings.TrimRight(string(r[:cut]), " "))
		name = strings.TrimLeft(string(r[cut:]), " ")
	}
	return append(out, name)
}

// isBreak reports whether a line may end before r[i].
func isBreak(r []rune, i int) bool {
	prev := r[i-1]
	switch {
	case prev == ':' && i >= 2 && r[i-2] == ':':
		return true
	case prev == ',' || prev == '(' || prev == '<' || prev == ' ':
		return true
	}
	return false
}
