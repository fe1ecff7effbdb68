package export

import (
	"fmt"
	"io"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profile-dev/profile/model"
)

// ImportOptions tune an import.
type ImportOptions struct {
	// SampleIndex names the sample type to import (pprof's -sample_index:
	// a type name or its index); "" picks one (see sampleValue).
	SampleIndex string
}

// Names for what pprof leaves unnamed: the module of a location without a
// mapping, the thread of samples without thread labels.
const (
	UnknownModule = "[unknown]"
	AllThreads    = "all threads"
)

// ReadPprof parses a pprof profile, gzip-compressed or not, and converts
// it with FromPprof.
func ReadPprof(r io.Reader, opt ImportOptions) (*model.Profile, error) {
	pp, err := profile.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("not a pprof profile: %w", err)
	}
	return FromPprof(pp, opt)
}

// FromPprof converts a pprof profile into a profile that passes Validate:
// the inverse of Pprof where one exists.
//
// A profile written by Pprof (sample types calls, self and total) comes
// back exact: every sample is a CCT node with its three values, its
// thread from the "thread" label, "[pruned]" leaves as dropped time.
//
// Any other pprof profile (a Go CPU profile, perf data converted by
// perf_to_profile, ...) becomes a sampled profile (model.Sampling): one
// sample type is chosen (ImportOptions.SampleIndex, see sampleValue) and
// converted to nanoseconds; each sample's stack, root first with inlined
// frames expanded (every pprof Line is a frame), is a CCT path of the
// thread its labels name (thread, tid, goroutine; one thread without);
// its value is self time at the leaf. Totals are computed as the model
// keeps them: a node's total is the time of the samples below it, only
// where its function is outermost on the path (recursion-aware). pprof
// has no call counts: every Calls is 0, and the profile says so.
//
// Functions are (module, name): the module is the location's mapping file
// ("[unknown]" without one), the name the function's name, or the
// location's address in its file when it was not symbolized. pprof knows
// no processes: a "pid" number label names one, else the samples are one
// process with pid 1; the first mapping is taken as the executable.
func FromPprof(pp *profile.Profile, opt ImportOptions) (*model.Profile, error) {
	if err := pp.CheckValid(); err != nil {
		return nil, fmt.Errorf("invalid pprof profile: %w", err)
	}
	im := &importer{pp: pp, p: model.New(), exact: isPprofExport(pp), threads: map[threadKey]int{}}
	im.in = model.NewInterner(im.p)
	if im.exact && opt.SampleIndex != "" {
		return nil, fmt.Errorf("--sample-index %s: this profile was written by profile export: its calls, self and total are imported exactly", opt.SampleIndex)
	}
	if !im.exact {
		v, err := sampleValue(pp, opt.SampleIndex)
		if err != nil {
			return nil, err
		}
		im.value = v
	}
	im.meta()
	for _, s := range pp.Sample {
		if err := im.sample(s); err != nil {
			return nil, err
		}
	}
	im.finish()
	if err := im.p.Validate(); err != nil {
		return nil, fmt.Errorf("pprof import: %w", err)
	}
	return im.p, nil
}

// isPprofExport reports whether pp was written by Pprof.
func isPprofExport(pp *profile.Profile) bool {
	want := [][2]string{{"calls", "count"}, {"self", "nanoseconds"}, {"total", "nanoseconds"}}
	if len(pp.SampleType) != len(want) {
		return false
	}
	for i, st := range pp.SampleType {
		if st.Type != want[i][0] || st.Unit != want[i][1] {
			return false
		}
	}
	return true
}

type importer struct {
	pp      *profile.Profile
	p       *model.Profile
	in      *model.Interner
	exact   bool
	value   sampleSel
	procs   map[int]int // pid -> process index
	noPid   bool        // a process stands for samples that name none
	threads map[threadKey]int
	trees   []*model.Tree
	frames  []int // scratch: one sample's functions, root first
}

// meta fills the profile's metadata: for an export of ours, what its
// comments kept; for another profile, its sampling.
func (im *importer) meta() {
	m := &im.p.Meta
	m.Mode = "import"
	m.StartUnixNs, m.DurationNs = im.pp.TimeNanos, im.pp.DurationNanos
	if len(im.pp.Mapping) > 0 {
		m.Exe = im.pp.Mapping[0].File
	}
	if !im.exact {
		m.Sampling = im.value.sampling
		return
	}
	for _, c := range im.pp.Comments {
		key, val, _ := strings.Cut(c, ": ")
		switch key {
		case "command":
			m.Command = strings.Fields(val)
		case "partial":
			m.Partial, m.PartialReason = true, val
		case "detached":
			m.Detached = true
		case "warning":
			m.Warnings = append(m.Warnings, val)
		}
	}
}

// sample adds one pprof sample to its thread's tree.
func (im *importer) sample(s *profile.Sample) error {
	frames, pruned := im.stack(s)
	tree := im.trees[im.thread(s)]
	node := 0
	for _, f := range frames {
		node = tree.Child(node, f)
	}
	n := &tree.Nodes[node]
	if !im.exact {
		v, err := im.value.ns(s)
		if err != nil {
			return err
		}
		n.SelfNs += v
		return nil
	}
	calls, self, total := s.Value[0], s.Value[1], s.Value[2]
	if calls < 0 || self < 0 || total < 0 {
		return fmt.Errorf("negative value in a sample of %s", im.pathName(frames))
	}
	if pruned {
		n.DroppedNs += self
		return nil
	}
	n.Calls += calls
	n.SelfNs += self
	n.TotalNs += total
	return nil
}

// stack returns the functions of s's stack, root first, inlined frames
// expanded. For an export of ours, a lone START frame is the root node and
// a "[pruned]" leaf is reported apart.
func (im *importer) stack(s *profile.Sample) (frames []int, pruned bool) {
	frames = im.frames[:0]
	defer func() { im.frames = frames }()
	for i := len(s.Location) - 1; i >= 0; i-- {
		loc := s.Location[i]
		module, buildID := UnknownModule, ""
		if loc.Mapping != nil && loc.Mapping.File != "" {
			module, buildID = loc.Mapping.File, loc.Mapping.BuildID
		}
		if len(loc.Line) == 0 {
			frames = append(frames, im.in.Func(im.in.Module(module, buildID), address(loc)))
			continue
		}
		for j := len(loc.Line) - 1; j >= 0; j-- {
			fn := loc.Line[j].Function
			if im.exact && loc.Mapping == nil {
				switch {
				case fn.SystemName == model.StartName && i == len(s.Location)-1:
					continue // the root: START is no frame of a path
				case fn.SystemName == PrunedFrame && i == 0:
					pruned = true
					continue
				}
			}
			frames = append(frames, im.in.Func(im.in.Module(module, buildID), im.funcName(fn, loc)))
		}
	}
	return frames, pruned
}

// funcName is a function's name in the model: an export of ours keeps the
// bare symbol as system name (its name is the display name module:name).
func (im *importer) funcName(fn *profile.Function, loc *profile.Location) string {
	name := fn.Name
	if im.exact || name == "" {
		name = fn.SystemName
	}
	if name == "" {
		name = address(loc)
	}
	return name
}

// address names a location without symbols by its offset in its file, an
// identity that holds across runs (not a virtual address).
func address(loc *profile.Location) string {
	a := loc.Address
	if m := loc.Mapping; m != nil && a >= m.Start {
		a = a - m.Start + m.Offset
	}
	return fmt.Sprintf("0x%x", a)
}

func (im *importer) pathName(frames []int) string {
	names := make([]string, len(frames))
	for i, f := range frames {
		names[i] = im.p.FuncName(f)
	}
	return strings.Join(names, ";")
}

// finish gives every thread its nodes and traced time; a sampled thread's
// totals are computed here.
func (im *importer) finish() {
	for ti := range im.p.Threads {
		t := &im.p.Threads[ti]
		t.Nodes = im.trees[ti].Nodes
		if !im.exact {
			sampledTotals(t.Nodes)
		}
		for i := range t.Nodes {
			t.TracedNs += t.Nodes[i].SelfNs + t.Nodes[i].DroppedNs
		}
	}
	if im.noPid {
		im.p.Meta.Warnings = append(im.p.Meta.Warnings, "pprof names no process: pid 1 stands for the profiled one")
	}
}

// sampledTotals sets the recursion-aware totals of a sampled CCT (parents
// before children): a node's total is the self time of its subtree where
// its function is not already on the path above it, 0 where it is; the
// root's is 0, as for a recorded thread.
func sampledTotals(nodes []model.Node) {
	sub := make([]int64, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		sub[i] += nodes[i].SelfNs
		if i > 0 {
			sub[nodes[i].Parent] += sub[i]
		}
	}
	for i := 1; i < len(nodes); i++ {
		nodes[i].TotalNs = sub[i]
		for a := nodes[i].Parent; a > 0; a = nodes[a].Parent {
			if nodes[a].Func == nodes[i].Func {
				nodes[i].TotalNs = 0
				break
			}
		}
	}
}
