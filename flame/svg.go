package flame

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// The script zooms and searches; browser_test.go runs it in Chromium.
//
//go:embed flame.js
var script string

// Geometry, in pixels. Frames are frameHeight apart, the root at the bottom.
const (
	xpad        = 10
	frameHeight = 16
	fontSize    = 12
	charWidth   = 0.59 * fontSize // Verdana's average, as flamegraph.pl
	top         = 60              // title, subtitle and controls
	bottom      = 34              // the details line
	hitFill     = "rgb(230,0,230)"
)

// box is a frame placed in the graph.
type box struct {
	f      *frame
	depth  int
	x      int64 // offset from the left, in units of the value
	parent int   // index of the caller's box, model.None for all
}

type drawer struct {
	p        *model.Profile
	opt      Options
	root     *frame
	threads  []model.ThreadView // the (member) threads drawn
	boxes    []box              // preorder: parents before their children
	elided   int                // frames narrower than MinWidth, left out
	depth    int                // the deepest box's depth
	scale    float64
	tracedNs int64
	path     []int // Options.Color's path, reused from frame to frame
}

// layout places every frame at least MinWidth wide.
func (d *drawer) layout(root *frame) {
	d.root = root
	for _, t := range d.threads {
		d.tracedNs += t.TracedNs
	}
	if root.width > 0 {
		d.scale = float64(d.opt.Width-2*xpad) / float64(root.width)
	}
	d.place(root, 0, 0, model.None)
}

func (d *drawer) place(f *frame, depth int, x int64, parent int) {
	if f.width == 0 {
		return
	}
	if float64(f.width)*d.scale < MinWidth {
		d.elided += f.count()
		return
	}
	d.boxes = append(d.boxes, box{f: f, depth: depth, x: x, parent: parent})
	d.depth = max(d.depth, depth)
	me := len(d.boxes) - 1
	for _, c := range f.kids {
		d.place(c, depth+1, x, me)
		x += c.width
	}
}

// count is the number of frames with a width from f up.
func (f *frame) count() int {
	if f.width == 0 {
		return 0
	}
	n := 1
	for _, c := range f.kids {
		n += c.count()
	}
	return n
}

func (d *drawer) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	width, height := d.opt.Width, top+(d.depth+1)*frameHeight+bottom
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">
<defs><linearGradient id="bg" x1="0" y1="0" x2="0" y2="1"><stop stop-color="#eeeeee" offset="5%%"/><stop stop-color="#eeeeb0" offset="95%%"/></linearGradient></defs>
<style type="text/css">
text { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }
#title { font-size: 17px; text-anchor: middle; }
#subtitle { text-anchor: middle; fill: rgb(90,90,90); }
#search, #matched { text-anchor: end; }
.btn { cursor: pointer; }
.btn:hover { fill: rgb(0,0,160); }
.f { cursor: pointer; }
.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }
.f text { pointer-events: none; }
.hide { display: none; }
.anc { opacity: 0.5; }
</style>
<rect x="0" y="0" width="%d" height="%d" fill="url(#bg)"/>
`, width, height, width, height, fontSize, width, height)
	fmt.Fprintf(bw, "<text id=\"title\" x=\"%d\" y=\"24\">%s</text>\n", width/2, esc(d.title()))
	fmt.Fprintf(bw, "<text id=\"subtitle\" x=\"%d\" y=\"44\">%s</text>\n", width/2, esc(d.subtitle()))
	fmt.Fprintf(bw, "<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n", xpad)
	fmt.Fprintf(bw, "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\">Search</text>\n", width-xpad)
	fmt.Fprintf(bw, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", xpad, height-12)
	fmt.Fprintf(bw, "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n", width-xpad, height-12)
	bw.WriteString("<g id=\"frames\">\n")
	for i, b := range d.boxes {
		x, w := xpad+float64(b.x)*d.scale, float64(b.f.width)*d.scale
		y := height - bottom - (b.depth+1)*frameHeight
		fmt.Fprintf(bw, "<g class=\"f\" id=\"f%d\" data-x=\"%d\" data-w=\"%d\" data-d=\"%d\"", i, b.x, b.f.width, b.depth)
		if b.f.label != "" { // the script refits the text from it after a zoom
			fmt.Fprintf(bw, " data-n=\"%s\"", esc(oneLine(b.f.label)))
		}
		fmt.Fprintf(bw, "><title>%s</title>", esc(d.hover(b.f)))
		fmt.Fprintf(bw, "<rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" rx=\"2\" fill=\"%s\"/>", px(x), y, px(w), frameHeight-1, esc(d.fill(b)))
		fmt.Fprintf(bw, "<text x=\"%s\" y=\"%d\">%s</text></g>\n", px(x+3), y+frameHeight-5, esc(fit(oneLine(b.f.text()), w)))
	}
	// The script comes last: it runs as it is read, on the frames above.
	fmt.Fprintf(bw, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\nvar fg = {width: %d, xpad: %d, font: %d, hit: \"%s\"};\n%s]]></script>\n</svg>\n",
		width, xpad, fontSize, hitFill, script)
	return bw.Flush()
}

func px(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// fit is the part of s a frame w pixels wide shows (the script does the
// same after a zoom).
func fit(s string, w float64) string {
	n := int((w - 6) / charWidth)
	if n < 3 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-2]) + ".."
}

func (d *drawer) title() string {
	if d.opt.Title != "" {
		return d.opt.Title
	}
	exe := d.p.Meta.Exe
	if exe == "" && len(d.p.Meta.Command) > 0 {
		exe = d.p.Meta.Command[0]
	}
	if exe == "" {
		exe = "-"
	}
	return exe + ": flame graph"
}

var valueNames = map[export.Value]string{export.Total: "total time", export.Self: "self time", export.Calls: "calls"}

func (d *drawer) subtitle() string {
	s := "widths by " + d.times() + " · " + d.traced()
	if d.p.Meta.Partial {
		s += ", partial"
	}
	switch {
	case d.root.width == 0:
		s += " · nothing to draw"
	case d.elided == 1:
		s += " · 1 frame narrower than 0.1 px left out"
	case d.elided > 1:
		s += fmt.Sprintf(" · %d frames narrower than 0.1 px left out", d.elided)
	}
	return s
}

// times says what the widths are: calls, or busy or wall self or total
// time, and where busy time comes from.
func (d *drawer) times() string {
	v := valueNames[d.opt.Value]
	switch {
	case d.opt.Value == export.Calls || d.p.Meta.Sampled():
		return v
	case d.opt.Busy && d.p.Meta.BusySampled():
		return "busy " + v + " (CPU samples)"
	case d.opt.Busy:
		return "busy " + v + " (waiting calls left out)"
	}
	return "wall " + v
}

// traced says how much time the graph holds, and how it was measured when
// not by tracing.
func (d *drawer) traced() string {
	verb := "traced"
	if d.p.Meta.Sampled() {
		verb = d.p.Meta.Values() + " ·"
	}
	s := fmt.Sprintf("%s %s in %d thread", verb, human.Duration(d.tracedNs), len(d.threads))
	if len(d.threads) != 1 {
		s += "s"
	}
	if scope := d.opt.Scope.String(); scope != "" {
		s += " (" + scope + ")"
	}
	return s
}

// hover is a frame's tooltip: its full name on the first line (the script
// searches it), then its module and vector, then its share of the graph.
func (d *drawer) hover(f *frame) string {
	var b strings.Builder
	b.WriteString(oneLine(f.name))
	switch f.kind {
	case kindAll:
		b.WriteString("\n" + d.traced())
	case kindThread:
		fmt.Fprintf(&b, "\nthread %s", oneLine(f.name))
	case kindPruned:
		fmt.Fprintf(&b, "\nself %s%s of contexts removed by prune", human.Duration(f.self), d.ofTraced(f.self))
	case kindFunc:
		if m := d.p.Functions[f.fn].Module; m != 0 {
			fmt.Fprintf(&b, "\nmodule %s", oneLine(d.p.ModuleName(m)))
		}
		b.WriteString("\n")
		if !d.p.Meta.Sampled() { // a sampled profile has no call counts
			fmt.Fprintf(&b, "calls %d", f.calls)
			if f.recursive > 0 {
				fmt.Fprintf(&b, " (%d recursive)", f.recursive)
			}
			if f.inFlight > 0 {
				fmt.Fprintf(&b, ", %d in flight", f.inFlight)
			}
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "self %s%s, total %s%s", human.Duration(f.self), d.ofTraced(f.self),
			human.Duration(f.total), d.ofTraced(f.total))
	}
	value := strconv.FormatInt(f.width, 10) + " calls"
	if d.opt.Value != export.Calls {
		value = human.Duration(f.width)
	}
	fmt.Fprintf(&b, "\nwidth %s, %s of the graph", value, human.Percent(100*float64(f.width)/float64(d.root.width)))
	return b.String()
}

func (d *drawer) ofTraced(ns int64) string {
	if d.tracedNs == 0 {
		return ""
	}
	return " (" + human.Percent(100*float64(ns)/float64(d.tracedNs)) + ")"
}

func (d *drawer) fill(b box) string {
	switch b.f.kind {
	case kindAll:
		return allFill
	case kindThread:
		return threadFill
	case kindPruned:
		return prunedFill
	}
	if d.opt.Color != nil {
		d.path = d.path[:0]
		for i := b; ; i = d.boxes[i.parent] {
			if i.f.kind == kindFunc {
				d.path = append(d.path, i.f.fn)
			}
			if i.parent == model.None {
				break
			}
		}
		slices.Reverse(d.path)
		return d.opt.Color(d.path, b.f.fn)
	}
	fn := d.p.Functions[b.f.fn]
	switch {
	case b.f.fn == model.StartFunc:
		return startFill
	case d.p.FuncName(b.f.fn) == fn.Name:
		// FuncName leaves the module out for the main executable only.
		return mainColor(fn.Name)
	}
	return libColor(d.p.ModuleName(fn.Module), fn.Name)
}

// oneLine keeps a name on the tooltip's first line.
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

// esc escapes s for XML text and attribute values; invalid UTF-8 and
// characters XML does not allow become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0xFFFE, r == 0xFFFF:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
