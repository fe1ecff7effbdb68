package export

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/profile-dev/profile/model"
)

// FoldedLine is one line of folded stacks: frames root first and a value.
type FoldedLine struct {
	Frames []string
	Value  int64
}

// Folded returns p's folded stacks: one line per CCT path with a non-zero
// opt.Value, sorted by frames. Without opt.Threads, identical paths of
// different threads are one line with the sum of their values; with it,
// every path starts with its thread's "name-tid" frame.
func Folded(p *model.Profile, opt Options) []FoldedLine {
	if opt.Busy {
		p = p.Busy()
	}
	v := opt.Value
	if v == "" {
		v = Self
	}
	sums := map[string]int64{}
	for ti := range p.Threads {
		t := &p.Threads[ti]
		var prefix string
		if opt.Threads {
			name := t.Name
			if name == "" {
				name = "thread"
			}
			prefix = frameName(fmt.Sprintf("%s-%d", name, t.Tid)) + ";"
		}
		stacks(t, func(s stack) {
			n := s.value(v)
			if n == 0 {
				return
			}
			var b strings.Builder
			b.WriteString(prefix)
			for i, f := range s.funcs {
				if i > 0 {
					b.WriteByte(';')
				}
				b.WriteString(frameName(p.FuncName(f)))
			}
			if s.pruned {
				b.WriteString(";" + PrunedFrame)
			}
			sums[b.String()] += n
		})
	}
	lines := make([]FoldedLine, 0, len(sums))
	for path, n := range sums {
		lines = append(lines, FoldedLine{Frames: strings.Split(path, ";"), Value: n})
	}
	slices.SortFunc(lines, func(a, b FoldedLine) int { return slices.Compare(a.Frames, b.Frames) })
	return lines
}

// frameName keeps a name from splitting a frame: ';' separates frames and
// a line ends at a newline.
func frameName(s string) string {
	return strings.NewReplacer(";", ":", "\n", " ", "\r", " ").Replace(s)
}

// WriteFolded writes p's folded stacks, "frame;frame;frame value" a line.
func WriteFolded(w io.Writer, p *model.Profile, opt Options) error {
	bw := bufio.NewWriter(w)
	for _, l := range Folded(p, opt) {
		fmt.Fprintf(bw, "%s %d\n", strings.Join(l.Frames, ";"), l.Value)
	}
	return bw.Flush()
}
