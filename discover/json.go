package discover

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/profile-dev/profile/instrument"
)

// Format is the "format" of the JSON document: bumped when a field is
// removed or renamed or its meaning changes (docs/discover.md).
const Format = "profile-discover/1"

type jsonDoc struct {
	Format   string   `json:"format"`
	Function string   `json:"function"`
	Depth    int      `json:"depth"`
	Profile  string   `json:"profile"`
	Warnings []string `json:"warnings"`
	Root     jsonNode `json:"root"`
}

type jsonNode struct {
	Level          int            `json:"level"`
	Kind           string         `json:"kind"`
	Tail           bool           `json:"tail"`
	Sites          []jsonSite     `json:"sites"`
	Function       *jsonFunc      `json:"function"`
	Operand        string         `json:"operand"`
	Observed       []jsonObserved `json:"observed"`
	ObservedKnown  bool           `json:"observed_known"`
	ObservedShared bool           `json:"observed_shared"`
	Expanded       bool           `json:"expanded"`
	Repeat         bool           `json:"repeat"`
	RepeatLevel    int            `json:"repeat_level"`
	NotExpanded    string         `json:"not_expanded"`
	Notes          []string       `json:"notes"`
	Callees        []jsonNode     `json:"callees"`
}

type jsonSite struct {
	Offset  uint64 `json:"offset"`
	Part    string `json:"part"`
	Address string `json:"address"`
}

type jsonFunc struct {
	Key     string `json:"key"`
	Module  string `json:"module"`
	Name    string `json:"name"`
	Display string `json:"display"`
	Main    bool   `json:"main"`
	Address string `json:"address"`
	Size    uint64 `json:"size"`
	IFunc   bool   `json:"ifunc"`
}

type jsonObserved struct {
	Function jsonFunc `json:"function"`
	Calls    int64    `json:"calls"`
}

// JSONOptions say what the document records of the command line.
type JSONOptions struct {
	Function string // FUNC as given
	Profile  string // --profile FILE, "" if none
}

// WriteJSON writes the tree as one JSON document (Format, docs/discover.md).
// Every field is always present; lists are [] when empty.
func WriteJSON(w io.Writer, d *instrument.Discovery, o JSONOptions) error {
	doc := jsonDoc{Format: Format, Function: o.Function, Depth: d.Depth, Profile: o.Profile,
		Warnings: nonNil(d.Warnings), Root: node(d.Root)}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func node(c *instrument.Callee) jsonNode {
	n := jsonNode{Level: c.Level, Kind: string(c.Kind), Tail: c.Tail, Sites: []jsonSite{}, Operand: c.Operand,
		Observed: []jsonObserved{}, ObservedKnown: c.ObservedKnown, ObservedShared: c.ObservedShared,
		Expanded: c.Expanded, Repeat: c.Repeat, RepeatLevel: c.RepeatOf, NotExpanded: c.Why,
		Notes: nonNil(c.Notes), Callees: []jsonNode{}}
	for _, s := range c.Sites {
		n.Sites = append(n.Sites, jsonSite{Offset: s.Offset, Part: s.Part, Address: hex(s.Addr)})
	}
	if c.Func != nil {
		f := function(*c.Func)
		n.Function = &f
	}
	for _, o := range c.Observed {
		n.Observed = append(n.Observed, jsonObserved{Function: function(o.Func), Calls: o.Calls})
	}
	for _, k := range c.Callees {
		n.Callees = append(n.Callees, node(k))
	}
	return n
}

func function(f instrument.FuncRef) jsonFunc {
	addr := ""
	if f.Addr != 0 {
		addr = hex(f.Addr)
	}
	return jsonFunc{Key: f.Key(), Module: f.Module, Name: f.Name, Display: f.Display(true), Main: f.Main,
		Address: addr, Size: f.Size, IFunc: f.IFunc}
}

func hex(a uint64) string { return fmt.Sprintf("%#x", a) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
