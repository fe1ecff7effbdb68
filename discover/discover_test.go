package discover

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/golden"
)

// sample is a depth-2 tree with every kind of row: direct calls (one with
// three sites, one in a .cold part), a tail call, a PLT call, an IFUNC,
// an unresolved import, two indirect sites sharing observed targets, a
// repeat and a C++ name.
func sample() *instrument.Discovery {
	fn := func(mod, name string, main bool, addr, size uint64) *instrument.FuncRef {
		return &instrument.FuncRef{Module: mod, Name: name, Main: main, Addr: addr, Size: size}
	}
	site := func(off uint64) []instrument.Site {
		return []instrument.Site{{Offset: off, Addr: 0x1290 + off}}
	}
	x := fn("app", "x", true, 0x1250, 20)
	z := instrument.Observed{Func: *fn("app", "z", true, 0, 0), Calls: 50}
	q := instrument.Observed{Func: *fn("libc.so.6", "qsort", false, 0, 0), Calls: 2}
	root := &instrument.Callee{Func: fn("app", "C", true, 0x1290, 79), Expanded: true, Callees: []*instrument.Callee{
		{Level: 1, Kind: instrument.CalleeDirect, Sites: site(0xa), Func: x, Expanded: true},
		{Level: 1, Kind: instrument.CalleeDirect, Func: fn("app", "y", true, 0x1270, 30), Expanded: true,
			Sites: []instrument.Site{{Offset: 0x15, Addr: 0x12a5}, {Offset: 0x20, Addr: 0x12b0}, {Offset: 0x28, Addr: 0x12b8},
				{Offset: 0x30, Addr: 0x12c0}, {Offset: 0x38, Addr: 0x12c8}, {Part: "C.cold", Offset: 0x4, Addr: 0x1075}},
			Callees: []*instrument.Callee{
				{Level: 2, Kind: instrument.CalleeDirect, Sites: []instrument.Site{{Offset: 0x9, Addr: 0x1279}}, Func: x, Repeat: true, RepeatOf: 1},
				{Level: 2, Kind: instrument.CalleeDirect, Tail: true, Sites: []instrument.Site{{Offset: 0x18, Addr: 0x1288}},
					Func: fn("app", "ns::Cache<int, std::string>::get(int) const", true, 0x1400, 60)},
			}},
		{Level: 1, Kind: instrument.CalleeIndirect, Sites: site(0x32), Operand: "rax",
			Observed: []instrument.Observed{z, q}, ObservedKnown: true, ObservedShared: true},
		{Level: 1, Kind: instrument.CalleeIndirect, Tail: true, Sites: site(0x36), Operand: "[rbx+0x8]",
			Observed: []instrument.Observed{z, q}, ObservedKnown: true, ObservedShared: true},
		{Level: 1, Kind: instrument.CalleePLT, Sites: site(0x3e), Func: fn("libc.so.6", "puts", false, 0x80e50, 409),
			Expanded: true, Notes: []string{"not in the profile (not traced, or never ran)"}},
		{Level: 1, Kind: instrument.CalleePLT, Sites: site(0x44), Func: &instrument.FuncRef{Module: "libc.so.6", Name: "strlen", Addr: 0x9f460, IFunc: true},
			Why: "an IFUNC: its implementation is chosen when the program loads"},
		{Level: 1, Kind: instrument.CalleePLT, Sites: site(0x48), Func: &instrument.FuncRef{Name: "missing_fn"},
			Why: "no library searched defines it"},
	}}
	return &instrument.Discovery{Root: root, Depth: 2, Warnings: []string{"library libmissing.so.1 not found: its functions show as ?:name"}}
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"sample.txt", func(b *bytes.Buffer) error { return WriteText(b, sample(), Options{}) }},
		{"sample.full.txt", func(b *bytes.Buffer) error { return WriteText(b, sample(), Options{FullNames: true}) }},
		{"sample.json", func(b *bytes.Buffer) error {
			return WriteJSON(b, sample(), JSONOptions{Function: "C", Profile: "run.data"})
		}},
		{"leaf.txt", func(b *bytes.Buffer) error {
			return WriteText(b, &instrument.Discovery{Depth: 1, Root: &instrument.Callee{Expanded: true,
				Func: &instrument.FuncRef{Module: "app", Name: "x", Main: true, Addr: 0x1250, Size: 20}}}, Options{})
		}},
	} {
		var b bytes.Buffer
		if err := c.write(&b); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, c.name, b.Bytes())
	}
}

// The JSON document has every field, lists never null, and reads back.
func TestJSONFields(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample(), JSONOptions{Function: "C"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "null,") || strings.Contains(b.String(), ": null\n") {
		// "function": null marks an indirect site; lists are never null.
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.Contains(line, "null") && !strings.Contains(line, `"function": null`) {
				t.Errorf("null outside an indirect site's function: %s", line)
			}
		}
	}
	var doc struct {
		Format string `json:"format"`
		Root   struct {
			Callees []struct {
				Kind     string `json:"kind"`
				Function *struct {
					Key string `json:"key"`
				} `json:"function"`
				Observed []struct {
					Function struct {
						Display string `json:"display"`
					} `json:"function"`
					Calls int64 `json:"calls"`
				} `json:"observed"`
			} `json:"callees"`
		} `json:"root"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != Format || len(doc.Root.Callees) != 7 {
		t.Fatalf("format %q, %d callees", doc.Format, len(doc.Root.Callees))
	}
	ind := doc.Root.Callees[2]
	if ind.Kind != "indirect" || ind.Function != nil || len(ind.Observed) != 2 || ind.Observed[0].Function.Display != "z" || ind.Observed[0].Calls != 50 {
		t.Errorf("indirect site: %+v", ind)
	}
	if k := doc.Root.Callees[6].Function.Key; k != "?:missing_fn" {
		t.Errorf("unresolved import key %q", k)
	}
}
