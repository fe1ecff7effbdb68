package timeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

const ms = 1_000_000

// sample is a synthetic profile with detail trees: consecutive trees that
// share ancestors and one that does not, arguments known (NArgs), unknown
// (all six) and not recorded, a negative int returned zero-extended, a
// pointer, a call left without returning, a C++ name to shorten, a call
// still running at the end under an ancestor in flight, dropped trees and
// a thread without trees.
func sample() *model.Profile {
	b := modeltest.NewBuilder("/srv/server")
	p0 := b.Process(100, model.None, "", 0)
	script := []modeltest.Step{modeltest.Enter(10, "main"), modeltest.Exit(10)}
	b.Thread(p0, 100, 0, "", 0, nil, script)
	b.Thread(p0, 101, 100, "main", 1, nil, script)
	b.Thread(p0, 102, 100, "main", 1, nil, script)
	f := b.Func
	p := b.P
	p.Meta.Detail = &model.DetailRule{Funcs: "handle_request|lookup|read|get", SlowNs: 10 * ms, Limit: 3}
	const (
		kept = model.DetailKept | model.DetailArgs | model.DetailReturned
		ret  = model.DetailReturned
	)
	main := model.DetailCall{Func: f("main"), StartNs: 1 * ms, EndNs: 900 * ms, Ret: 0, Flags: ret, NArgs: -1}
	serve1 := model.DetailCall{Func: f("serve"), Depth: 1, StartNs: 2 * ms, EndNs: 400 * ms, Ret: 7, Flags: ret, NArgs: -1}
	serve2 := model.DetailCall{Func: f("serve"), Depth: 1, StartNs: 401 * ms, EndNs: 899 * ms, Ret: 9, Flags: ret, NArgs: -1}
	p.Threads[0].Trees = []model.DetailTree{
		{Calls: []model.DetailCall{main, serve1,
			{Func: f("handle_request"), Depth: 2, StartNs: 10 * ms, EndNs: 30*ms + 312_746, Args: [6]uint64{50, 5007, 103, 0, 49, 0x7f00}, Ret: 50, Flags: kept, NArgs: 3},
			{Func: f("lookup"), Depth: 3, StartNs: 10*ms + 30, EndNs: 30*ms + 312_000, Args: [6]uint64{50, 5007, 0x20a32}, Ret: 150, Flags: kept, NArgs: 1},
		}},
		{Calls: []model.DetailCall{main, serve1,
			{Func: f("handle_request"), Depth: 2, StartNs: 100 * ms, EndNs: 112 * ms, Args: [6]uint64{762, 76207, 687}, Ret: 0xfffffffd, Flags: kept, NArgs: 3},
			{Func: f("libc.so.6:read"), Depth: 3, StartNs: 100*ms + 500, EndNs: 111 * ms, Args: [6]uint64{3, 0x7ffd5a3c1e80, 4096, 0, 0xffffffffffffffff, 0xdeadbeef00000001}, Ret: 16, Flags: kept, NArgs: -1},
		}},
		{Calls: []model.DetailCall{main, serve2,
			{Func: f("ns::Cache<std::string, int>::get(std::string const&)"), Depth: 2, StartNs: 500 * ms, EndNs: 500*ms + 1250,
				Args: [6]uint64{0x55d0c0ffee00, 0x7ffd5a3c1f00}, Flags: model.DetailKept | model.DetailArgs, NArgs: 2},
		}},
	}
	inflight := model.DetailFlags(model.DetailInFlight | model.DetailOpen)
	p.Threads[1].Trees = []model.DetailTree{
		{Calls: []model.DetailCall{
			{Func: f("worker"), StartNs: 0, EndNs: 950 * ms, Flags: inflight, NArgs: -1},
			{Func: f("handle_request"), Depth: 1, StartNs: 920 * ms, EndNs: 950 * ms, Args: [6]uint64{7, 707, 82}, Flags: model.DetailKept | model.DetailArgs | model.DetailOpen, NArgs: 3},
		}},
	}
	p.Threads[1].DroppedTrees = 5
	return p
}

func TestSampleValid(t *testing.T) {
	if err := sample().Validate(); err != nil {
		t.Fatal(err)
	}
}

var writers = map[string]func(io.Writer, *model.Profile, Options) error{"txt": WriteText, "json": WriteJSON}

func TestGolden(t *testing.T) {
	for name, opt := range map[string]Options{
		"sample":        {},
		"sample-full":   {FullNames: true},
		"sample-tid101": {Tid: 101},
		"sample-min20":  {MinNs: 20 * ms},
	} {
		for ext, w := range writers {
			var buf bytes.Buffer
			if err := w(&buf, sample(), opt); err != nil {
				t.Fatalf("%s.%s: %v", name, ext, err)
			}
			golden.Check(t, name+"."+ext, buf.Bytes())
		}
	}
}

// What the text shows, line by line, beside the goldens.
func TestText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, sample(), Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, c := range []struct {
		want  string // a line ends with it
		count int
	}{
		{"|     handle_request(50, 5007, 103) = 50", 1}, // NArgs 3
		{"|       lookup(50) = 150", 1},                 // NArgs 1
		{"|     handle_request(762, 76207, 687) = -3", 1},
		{"|       libc.so.6:read(3, 0x7ffd5a3c1e80, 4096, 0, -1, 0xdeadbeef00000001) = 16", 1}, // NArgs unknown: six
		{"|     ns::Cache<…>::get(0x55d0c0ffee00, 0x7ffd5a3c1f00)", 1},                         // short name, no return
		{"| main = 0", 1},    // shared by all three trees: once
		{"|   serve = 7", 1}, // shared by the first two
		{"|   serve = 9", 1}, // a new activation: shown again
		{"| worker (entered before tracing) (still running at the end)", 1},
		{"|   handle_request(7, 707, 82) (still running at the end)", 1},
	} {
		n := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, c.want) {
				n++
			}
		}
		if n != c.count {
			t.Errorf("%d lines end with %q, want %d:\n%s", n, c.want, c.count, out)
		}
	}
	for _, want := range []string{
		"kept (*): calls of handle_request|lookup|read|get that lasted at least 10ms; the others are their callers\n",
		"\nthread 100 t100 (pid 100): 3 trees\n",
		"\nthread 101 t101 (pid 100): 1 tree, 5 older dropped (--detail-limit)\n",
		" 20.312 ms * |     handle_request(50",
		"≤ 0.000 ms  ≥ 950.000 ms   | worker",
		"≥ 30.000 ms * |   handle_request(7",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "thread 102") {
		t.Errorf("thread 102 has no trees, shown:\n%s", out)
	}
}

// The JSON carries the same trees, in full.
func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sample(), Options{MinNs: 20 * ms}); err != nil {
		t.Fatal(err)
	}
	var doc jsonDoc
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != Format || doc.Rule.Funcs != "handle_request|lookup|read|get" || doc.MinNs != 20*ms || len(doc.Threads) != 2 {
		t.Fatalf("doc %+v", doc)
	}
	th := doc.Threads[0]
	if th.Tid != 100 || th.RecordedTrees != 3 || len(th.Trees) != 1 || len(th.Trees[0].Calls) != 4 {
		t.Fatalf("thread 100 %+v", th)
	}
	hr := th.Trees[0].Calls[2]
	if hr.Name != "handle_request" || hr.Module != "server" || !hr.Kept || !hr.HasArgs || !hr.ArityKnown ||
		len(hr.Args) != 3 || hr.Args[1] != 5007 || hr.ArgsHex[1] != "0x138f" || hr.Ret != 50 || hr.DurationNs != 20_312_746 {
		t.Errorf("handle_request %+v", hr)
	}
	if m := th.Trees[0].Calls[0]; m.Kept || m.HasArgs || m.Args == nil || len(m.Args) != 0 || m.RetHex != "0x0" {
		t.Errorf("main %+v", m)
	}
	w := doc.Threads[1]
	if w.DroppedTrees != 5 || len(w.Trees) != 1 {
		t.Fatalf("thread 101 %+v", w)
	}
	if c := w.Trees[0].Calls[1]; !c.Open || c.Returned || c.RetHex != "" || c.InFlight {
		t.Errorf("open call %+v", c)
	}
	if c := w.Trees[0].Calls[0]; !c.InFlight || !c.Open {
		t.Errorf("in-flight ancestor %+v", c)
	}
}

func TestNothingShown(t *testing.T) {
	noTrees := func() *model.Profile {
		p := sample()
		for i := range p.Threads {
			p.Threads[i].Trees, p.Threads[i].DroppedTrees = nil, 0
		}
		return p
	}
	noDetail := func() *model.Profile {
		p := noTrees()
		p.Meta.Detail = nil
		return p
	}
	for _, c := range []struct {
		name string
		p    *model.Profile
		opt  Options
		err  string // from both writers
		text string // the text's one line otherwise
	}{
		{"not recorded in detail", noDetail(), Options{}, ErrNoDetail.Error(), ""},
		{"no such thread", sample(), Options{Tid: 999}, "no thread 999 in the profile", ""},
		{"no call kept", noTrees(), Options{},
			"", "no detail trees: no call met the rule (calls of handle_request|lookup|read|get that lasted at least 10ms)\n"},
		{"thread without trees", sample(), Options{Tid: 102},
			"", "no detail trees in thread 102: no call met the rule (calls of handle_request|lookup|read|get that lasted at least 10ms)\n"},
		{"all shorter", sample(), Options{MinNs: 3600 * 1000 * ms},
			"", "no detail trees whose kept call lasted at least 1h0m0s (4 shorter)\n"},
	} {
		for ext, w := range writers {
			var buf bytes.Buffer
			err := w(&buf, c.p, c.opt)
			switch {
			case c.err != "":
				if err == nil || err.Error() != c.err {
					t.Errorf("%s (%s): error %v, want %q", c.name, ext, err, c.err)
				}
			case err != nil:
				t.Errorf("%s (%s): %v", c.name, ext, err)
			case ext == "txt" && buf.String() != c.text:
				t.Errorf("%s: text %q, want %q", c.name, buf.String(), c.text)
			case ext == "json" && !json.Valid(buf.Bytes()):
				t.Errorf("%s: bad JSON %s", c.name, buf.String())
			}
		}
	}
	if err := WriteText(io.Discard, noDetail(), Options{}); !errors.Is(err, ErrNoDetail) {
		t.Errorf("not recorded in detail: %v, want ErrNoDetail", err)
	}
}
