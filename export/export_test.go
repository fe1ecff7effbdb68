package export_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/prune/prunetest"
)

var profiles = prunetest.Profiles()

func TestFoldedGolden(t *testing.T) {
	for _, c := range []struct {
		profile, file string
		opt           export.Options
	}{
		{"sample", "sample.folded", export.Options{}},
		{"sample", "sample-calls.folded", export.Options{Value: export.Calls}},
		{"sample", "sample-total-threads.folded", export.Options{Value: export.Total, Threads: true}},
		{"composite", "composite-threads.folded", export.Options{Threads: true}},
		{"pruned", "pruned.folded", export.Options{Value: export.Self}},
	} {
		var buf bytes.Buffer
		if err := export.WriteFolded(&buf, profiles[c.profile](t), c.opt); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, c.file, buf.Bytes())
	}
}

// Folded self values add up to the traced time, with and without threads,
// pruned or not; lines are sorted, unique and never zero.
func TestFoldedAddsUp(t *testing.T) {
	for name, mk := range profiles {
		p := mk(t)
		var traced int64
		for _, th := range p.Threads {
			traced += th.TracedNs
		}
		for _, threads := range []bool{false, true} {
			lines := export.Folded(p, export.Options{Threads: threads})
			var sum int64
			for i, l := range lines {
				sum += l.Value
				if l.Value == 0 {
					t.Errorf("%s: zero line %v", name, l.Frames)
				}
				if i > 0 && strings.Join(lines[i-1].Frames, ";") >= strings.Join(l.Frames, ";") {
					t.Errorf("%s: lines out of order or repeated at %v", name, l.Frames)
				}
			}
			if sum != traced {
				t.Errorf("%s threads=%v: folded self sums to %d, traced %d", name, threads, sum, traced)
			}
		}
	}
}

func TestFoldedMergesThreads(t *testing.T) {
	// Sample's threads 101 and 102 both run worker;compute.
	lines := export.Folded(modeltest.Sample(), export.Options{Value: export.Calls})
	for _, l := range lines {
		if strings.Join(l.Frames, ";") == "worker;compute" && l.Value != 2 {
			t.Errorf("worker;compute calls = %d, want 2 (threads 101 and 102)", l.Value)
		}
	}
	for _, l := range export.Folded(modeltest.Sample(), export.Options{Value: export.Calls, Threads: true}) {
		if l.Frames[len(l.Frames)-1] == "compute" && l.Value != 1 {
			t.Errorf("%v calls = %d, want 1 per thread", l.Frames, l.Value)
		}
	}
}

func TestParseValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		want export.Value
		err  bool
	}{
		{"self", export.Self, false},
		{"CALLS", export.Calls, false},
		{"total", export.Total, false},
		{"", "", true},
		{"wall", "", true},
	} {
		got, err := export.ParseValue(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ParseValue(%q) = %q, %v", c.in, got, err)
		}
	}
}

func TestFormats(t *testing.T) {
	if got := strings.Join(export.FormatNames(), ","); got != "chrome,folded,pprof" {
		t.Errorf("formats %s", got)
	}
	for name, f := range export.Formats {
		var buf bytes.Buffer
		if err := f.Write(&buf, modeltest.Sample(), export.Options{}); err != nil || buf.Len() == 0 {
			t.Errorf("%s: %v, %d bytes", name, err, buf.Len())
		}
	}
}

func TestPprofGolden(t *testing.T) {
	for name, mk := range profiles {
		pp, err := export.Pprof(mk(t), export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, name+".pprof.txt", []byte(pp.String()))
	}
}

// The written profile parses back (gzip) to one sample per node with the
// node's values, its path leaf first and its thread label.
func TestPprofRoundTrip(t *testing.T) {
	for name, mk := range profiles {
		p := mk(t)
		var buf bytes.Buffer
		if err := export.WritePprof(&buf, p, export.Options{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(buf.Bytes(), []byte{0x1f, 0x8b}) {
			t.Fatalf("%s: not gzip", name)
		}
		pp, err := profile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if pp.DefaultSampleType != "self" || len(pp.SampleType) != 3 || pp.SampleType[2].Type != "total" {
			t.Errorf("%s: sample types %v default %q", name, pp.SampleType, pp.DefaultSampleType)
		}
		if !strings.HasPrefix(pp.Comments[0], "command: ") || pp.DurationNanos != p.Meta.DurationNs {
			t.Errorf("%s: comments %q duration %d", name, pp.Comments, pp.DurationNanos)
		}
		i := 0
		for _, th := range p.Threads {
			label := strconv.Itoa(th.Tid) + " " + th.Name
			for _, n := range th.Nodes {
				// the node's own sample, then its [pruned] one if it has dropped time
				for k, want := range [][]int64{{n.Calls, n.SelfNs, n.TotalNs}, {0, n.DroppedNs, 0}} {
					if len(pp.Sample) <= i {
						t.Fatalf("%s: %d samples", name, len(pp.Sample))
					}
					s := pp.Sample[i]
					if got := s.Value; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
						t.Errorf("%s: sample %d values %v, want %v", name, i, got, want)
					}
					if s.Label["thread"][0] != label {
						t.Errorf("%s: sample %d thread %q, want %q", name, i, s.Label["thread"], label)
					}
					leaf, wantLeaf := s.Location[0].Line[0].Function.Name, p.FuncName(n.Func)
					if k == 1 {
						wantLeaf = export.PrunedFrame
					}
					if leaf != wantLeaf {
						t.Errorf("%s: sample %d leaf %s, want %s", name, i, leaf, wantLeaf)
					}
					i++
					if n.DroppedNs == 0 {
						break
					}
				}
			}
		}
		if i != len(pp.Sample) {
			t.Errorf("%s: %d samples, want %d", name, len(pp.Sample), i)
		}
	}
}
