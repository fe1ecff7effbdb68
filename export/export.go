// Package export turns a profile into the formats other tools read: pprof's
// profile.proto (go tool pprof, Pyroscope, Parca, ...), folded stacks
// (flamegraph.pl, inferno, speedscope) and the Chrome Trace Event Format
// (Perfetto UI, chrome://tracing: the detail trees on a timeline, see
// chrome.go). Each format is a small file with a pure function from a
// model.Profile to bytes; Formats is the one table the command line
// chooses from.
//
// pprof and folded walk every thread's calling-context tree: every CCT
// node is one stack, the path of functions from the thread's root to the
// node. START is left out of the paths, except for the root node itself,
// whose own time (a thread's time outside any traced function) is the
// one-frame stack "START", as summary lists it. The self time of contexts
// removed by prune is a "[pruned]" frame under the node that kept it, so
// that self times still add up to the traced time. The values are the
// measured ones: CPU samples (record --sample) are not exported, and a
// context they alone made (model.Node.SampleOnly), which has no measured
// value, is no stack. With Options.Busy (pprof, folded) they are busy
// times, as summary shows them, and such a context is a stack.
package export

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/profile-dev/profile/model"
)

// Value is the number of a node a folded line carries.
type Value string

const (
	Self  Value = "self"  // self time, nanoseconds
	Calls Value = "calls" // call count
	Total Value = "total" // total time of outermost activations, nanoseconds
)

// ParseValue reads a --value argument.
func ParseValue(s string) (Value, error) {
	v := Value(strings.ToLower(s))
	switch v {
	case Self, Calls, Total:
		return v, nil
	}
	return "", fmt.Errorf("unknown value %q: use self, calls or total", s)
}

// Options tune an export; a format ignores what it has no use for.
type Options struct {
	Value   Value // folded: the number on each line (default Self)
	Threads bool  // folded: the thread as the first frame, threads kept apart
	// Busy (pprof, folded): busy times (model.Profile.Busy), as summary
	// shows them: the CPU samples' where the profile has them (the
	// contexts they alone made are stacks then), else the measured times
	// less the time in waiting calls. Otherwise the measured wall times.
	Busy bool
}

// Format is one output format.
type Format struct {
	Ext   string // the file extension, with its dot
	Write func(io.Writer, *model.Profile, Options) error
}

// Formats are the export formats by name.
var Formats = map[string]Format{
	"pprof":  {Ext: ".pb.gz", Write: WritePprof},
	"folded": {Ext: ".folded", Write: WriteFolded},
	"chrome": {Ext: ".trace.json", Write: WriteChrome},
}

// FormatNames lists the formats, sorted.
func FormatNames() []string {
	names := make([]string, 0, len(Formats))
	for n := range Formats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// PrunedFrame names the self time of contexts removed by prune.
const PrunedFrame = "[pruned]"

// stack is one exported stack of a thread: the node and its path of
// function indices, root first (START left out unless the node is the root).
type stack struct {
	node   *model.Node
	funcs  []int
	pruned bool // the node's DroppedNs under a [pruned] frame
}

// stacks calls f for every stack of thread t: each node, then, when it
// holds pruned time, the same path with the [pruned] frame. funcs is only
// valid during the call.
func stacks(t *model.Thread, f func(s stack)) {
	var buf []int
	for ni := range t.Nodes {
		n := &t.Nodes[ni]
		if n.DroppedNs == 0 && n.SampleOnly(model.None) && n.SelfNs == 0 && n.TotalNs == 0 {
			continue // made by CPU samples alone, its measured times wanted: none
		}
		buf = buf[:0]
		for i := ni; i > 0; i = t.Nodes[i].Parent {
			buf = append(buf, t.Nodes[i].Func)
		}
		if ni == 0 {
			buf = append(buf, model.StartFunc)
		}
		slices.Reverse(buf)
		f(stack{node: n, funcs: buf})
		if n.DroppedNs > 0 {
			f(stack{node: n, funcs: buf, pruned: true})
		}
	}
}

// values is a stack's (calls, self, total); a [pruned] stack has only self.
func (s stack) values() (calls, self, total int64) {
	if s.pruned {
		return 0, s.node.DroppedNs, 0
	}
	return s.node.Calls, s.node.SelfNs, s.node.TotalNs
}

// value is the one number v of a stack.
func (s stack) value(v Value) int64 {
	calls, self, total := s.values()
	switch v {
	case Calls:
		return calls
	case Total:
		return total
	}
	return self
}
