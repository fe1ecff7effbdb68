package flame_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/profile-dev/profile/flame"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/prune/prunetest"
)

var profiles = prunetest.Profiles()

// svgFrame is a frame read back from a written SVG.
type svgFrame struct {
	Class string `xml:"class,attr"`
	ID    string `xml:"id,attr"`
	X     int64  `xml:"data-x,attr"`
	W     int64  `xml:"data-w,attr"`
	D     int    `xml:"data-d,attr"`
	N     string `xml:"data-n,attr"` // the shortened name the frame shows, if any
	Title string `xml:"title"`
	Rect  struct {
		X     float64 `xml:"x,attr"`
		Y     float64 `xml:"y,attr"`
		Width float64 `xml:"width,attr"`
		Fill  string  `xml:"fill,attr"`
	} `xml:"rect"`
	Text string   `xml:"text"`
	path []string // names from the frame under "all" up to this one
}

func (f svgFrame) name() string { return strings.SplitN(f.Title, "\n", 2)[0] }

type svgDoc struct {
	Width  int        `xml:"width,attr"`
	Texts  []svgText  `xml:"text"`
	Frames []svgFrame `xml:"g>g"`
}

type svgText struct {
	ID   string `xml:"id,attr"`
	Text string `xml:",chardata"`
}

func (d svgDoc) text(id string) string {
	for _, t := range d.Texts {
		if t.ID == id {
			return t.Text
		}
	}
	return ""
}

// render writes p's flame graph and parses it back strictly, setting each
// frame's path from the preorder the frames are written in.
func render(t *testing.T, p *model.Profile, opt flame.Options) ([]byte, svgDoc) {
	t.Helper()
	var buf bytes.Buffer
	if err := flame.SVG(&buf, p, opt); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("SVG does not parse: %v", err)
	}
	var stack []string
	for i := range doc.Frames {
		f := &doc.Frames[i]
		if f.D > len(stack) {
			t.Fatalf("frame %s at depth %d after depth %d", f.ID, f.D, len(stack)-1)
		}
		stack = append(stack[:f.D], f.name())
		f.path = append([]string(nil), stack[1:]...)
	}
	return buf.Bytes(), doc
}
