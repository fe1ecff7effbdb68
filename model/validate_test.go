package model_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// invariantCases break modeltest.Sample one invariant at a time. The
// measurement ones (a timing measurement can break them) are the last:
// Repair fixes them, and only them.
var invariantCases = []invariantCase{
	{"start not first", func(p *model.Profile) { p.Functions[0].Name = "main" }, "function 0 must be START"},
	{"module 0 not empty", func(p *model.Profile) { p.Modules[0].Path = "/x" }, "module 0 must be the empty module"},
	{"function module out of range", func(p *model.Profile) { p.Functions[1].Module = 99 }, "module index 99 out of range"},
	{"duplicate function", func(p *model.Profile) { p.Functions = append(p.Functions, p.Functions[1]) }, "duplicate function"},
	{"duplicate module", func(p *model.Profile) { p.Modules = append(p.Modules, p.Modules[1]) }, "duplicate module"},
	{"library function in module 0", func(p *model.Profile) { p.Functions[1].Module = 0 }, "only START may live in module 0"},
	{"bad pid", func(p *model.Profile) { p.Processes[0].Pid = 0 }, "pid must be positive"},
	{"parent process after child", func(p *model.Profile) { p.Processes[1].Parent = 1 }, "parent index 1 must precede"},
	{"forked-by out of range", func(p *model.Profile) { p.Processes[1].ForkedBy = 1000 }, "forked-by function 1000 out of range"},
	{"exec keeps pid", func(p *model.Profile) { p.Processes[1].ExecOf = 0 }, "keeps the pid"},
	{"thread process out of range", func(p *model.Profile) { p.Threads[0].Process = 5 }, "process index 5 out of range"},
	{"spawner out of range", func(p *model.Profile) { p.Threads[1].SpawnedBy = -7 }, "spawning function -7 out of range"},
	{"negative level", func(p *model.Profile) { p.Threads[1].Level = -1 }, "negative nesting level"},
	{"root not START", func(p *model.Profile) { p.Threads[0].Nodes[0].Func = 1 }, "node 0 must be the START root"},
	{"parent after child", func(p *model.Profile) { p.Threads[0].Nodes[1].Parent = 3 }, "parent 3 must precede its child"},
	{"START below root", func(p *model.Profile) { p.Threads[0].Nodes[2].Func = model.StartFunc }, "START only at the root"},
	{"node function out of range", func(p *model.Profile) { p.Threads[0].Nodes[2].Func = 10_000 }, "function 10000 out of range"},
	{"not a tree", func(p *model.Profile) {
		n := p.Threads[0].Nodes[1]
		p.Threads[0].Nodes = append(p.Threads[0].Nodes, model.Node{Func: n.Func, Parent: n.Parent})
	}, "two children of node 0 for one function"},
	{"negative calls", func(p *model.Profile) { p.Threads[0].Nodes[1].Calls = -1 }, "negative value"},
	{"recursive above calls", func(p *model.Profile) { p.Threads[0].Nodes[1].RecursiveCalls = 99 }, "recursive calls 99 exceed calls"},
	{"kinds above calls", func(p *model.Profile) { p.Threads[0].Nodes[1].IndirectCalls = 99 }, "call kinds add up to more"},
	{"member level", func(p *model.Profile) {
		p.Threads[1].Members = []model.Member{{Pid: 100, Tid: 101, SpawnedBy: model.None, Level: 4}}
	}, "member level 4 differs"},
	{"contributions do not add up", func(p *model.Profile) {
		p.Threads[1].Members = []model.Member{{Pid: 100, Tid: 101, SpawnedBy: model.None, Level: 1}}
		p.Threads[1].Nodes[1].Contribs = []model.Contrib{{Member: 0, Calls: 1000}}
	}, "do not add up to the node"},
	{"contribution member out of range", func(p *model.Profile) {
		p.Threads[1].Nodes[1].Contribs = []model.Contrib{{Member: 3}}
	}, "members in increasing order"},
	{"detail call out of order", func(p *model.Profile) {
		p.Threads[0].Trees = []model.DetailTree{{Calls: []model.DetailCall{{Func: 1, Depth: 1}}}}
	}, "depth 1 out of order"},
	{"arc callee out of range", func(p *model.Profile) {
		p.Threads[0].Arcs = []model.Arc{{Caller: model.None, Callee: 10_000, Calls: 1}}
	}, "arc 0: callee 10000 out of range"},
	{"arc callee START", func(p *model.Profile) {
		p.Threads[0].Arcs = []model.Arc{{Caller: 1, Callee: model.StartFunc, Calls: 1}}
	}, "arc 0: callee 0 out of range"},
	{"arc caller START", func(p *model.Profile) {
		p.Threads[0].Arcs = []model.Arc{{Caller: model.StartFunc, Callee: 1, Calls: 1}}
	}, "arc 0: caller 0 out of range"},
	{"arc caller out of range", func(p *model.Profile) {
		p.Threads[0].Arcs = []model.Arc{{Caller: -2, Callee: 1, Calls: 1}}
	}, "arc 0: caller -2 out of range"},
	{"arc without calls", func(p *model.Profile) {
		p.Threads[0].Arcs = []model.Arc{{Caller: model.None, Callee: 1}}
	}, "arc 0: 0 calls"},
	{"arcs out of order", func(p *model.Profile) {
		p.Threads[0].Arcs = []model.Arc{{Caller: model.None, Callee: 2, Calls: 1}, {Caller: model.None, Callee: 1, Calls: 1}}
	}, "arc 1: not after arc 0"},
	{"arc pair twice", func(p *model.Profile) {
		p.Threads[0].Arcs = []model.Arc{{Caller: 1, Callee: 2, Calls: 1}, {Caller: 1, Callee: 2, Calls: 1}}
	}, "arc 1: not after arc 0"},
	{"arc shares in a recorded thread", func(p *model.Profile) {
		p.Threads[0].Arcs = []model.Arc{{Caller: 1, Callee: 2, Calls: 1, Contribs: []model.ArcContrib{{Member: 0, Calls: 1}}}}
	}, "arc 0: member shares in a thread without members"},
	{"arc shares do not add up", func(p *model.Profile) {
		p.Threads[1].Members = []model.Member{{Pid: 100, Tid: 101, SpawnedBy: model.None, Level: 1}}
		p.Threads[1].Arcs = []model.Arc{{Caller: 1, Callee: 2, Calls: 3, Contribs: []model.ArcContrib{{Member: 0, Calls: 1}}}}
	}, "arc 0: member shares add up to 1 calls, the arc has 3"},
	{"arc share of no member", func(p *model.Profile) {
		p.Threads[1].Members = []model.Member{{Pid: 100, Tid: 101, SpawnedBy: model.None, Level: 1}}
		p.Threads[1].Arcs = []model.Arc{{Caller: 1, Callee: 2, Calls: 1, Contribs: []model.ArcContrib{{Member: 1, Calls: 1}}}}
	}, "arc 0: member shares must name members in increasing order"},
	{"self times overflow", func(p *model.Profile) {
		p.Threads[0].Nodes[1].SelfNs, p.Threads[0].Nodes[2].SelfNs = math.MaxInt64/2+1, math.MaxInt64/2+1
	}, "self times overflow"},
	{"composite shares cannot fit", func(p *model.Profile) {
		th := &p.Threads[1]
		th.Members = []model.Member{{Pid: 100, Tid: 101, SpawnedBy: model.None, Level: 1, TracedNs: 2 * th.TracedNs}}
		for i := range th.Nodes {
			n := &th.Nodes[i]
			n.Contribs = []model.Contrib{{Member: 0, Calls: n.Calls, RecursiveCalls: n.RecursiveCalls, SelfNs: n.SelfNs, TotalNs: n.TotalNs}}
		}
		th.Nodes[1].TotalNs = th.TracedNs + 1
		th.Nodes[1].Contribs[0].TotalNs = th.TracedNs + 1
	}, "members' shares, each within its member's traced time, do not fit"},
	measurement(invariantCase{"self times do not add up", func(p *model.Profile) { p.Threads[0].Nodes[1].SelfNs++ }, "self times add up to"}),
	measurement(invariantCase{"total above traced", func(p *model.Profile) { p.Threads[0].Nodes[1].TotalNs = p.Threads[0].TracedNs + 1 }, "exceeds the thread's traced time"}),
	measurement(invariantCase{"detail call ends before it starts", func(p *model.Profile) {
		p.Threads[3].Trees = []model.DetailTree{{Calls: []model.DetailCall{{Func: 1, StartNs: 10, EndNs: 20}, {Func: 2, Depth: 1, StartNs: 15, EndNs: 14}}}}
	}, "detail tree 0: call 1 ends before it starts"}),
}

type invariantCase struct {
	name   string
	break_ func(p *model.Profile)
	want   string
}

// measurement marks a case whose invariant a measurement can break.
func measurement(c invariantCase) invariantCase {
	c.name = "measurement: " + c.name
	return c
}

func (c invariantCase) measurement() bool { return strings.HasPrefix(c.name, "measurement: ") }

func TestValidateCatchesEachInvariant(t *testing.T) {
	if err := modeltest.Sample().Validate(); err != nil {
		t.Fatalf("sample invalid: %v", err)
	}
	for _, c := range invariantCases {
		t.Run(c.name, func(t *testing.T) {
			p := modeltest.Sample()
			c.break_(p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want %q", err, c.want)
			}
			var ie *model.InvariantError
			if !errors.As(err, &ie) || ie.Measurement != c.measurement() {
				t.Fatalf("Validate() = %#v: measurement flag wrong", err)
			}
		})
	}
}

// Repair fixes what a measurement broke, after which the profile is
// valid, and leaves a structural error as it is, for Validate.
func TestRepairFixesOnlyMeasurements(t *testing.T) {
	for _, c := range invariantCases {
		t.Run(c.name, func(t *testing.T) {
			p := modeltest.Sample()
			c.break_(p)
			before := fmt.Sprintf("%+v", p)
			lines := p.Repair()
			if !c.measurement() {
				if lines != nil || fmt.Sprintf("%+v", p) != before {
					t.Fatalf("Repair() = %q on a structural error, or changed the profile", lines)
				}
				return
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "a measurement error") {
				t.Fatalf("Repair() = %q, want one line", lines)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("after Repair: %v", err)
			}
		})
	}
}

// validProfiles are the valid profiles the model tests build.
func validProfiles() map[string]*model.Profile {
	detail := modeltest.Sample()
	detail.Threads[0].Trees = []model.DetailTree{{Calls: []model.DetailCall{
		{Func: 1, StartNs: 10, EndNs: 900}, {Func: 2, Depth: 1, StartNs: 20, EndNs: 20}}}}
	compensated, _ := model.Compensate(modeltest.Sample(), []model.ProbeCost{1: {InNs: 3, OutNs: 2}, 2: {InNs: 50, OutNs: 50}})
	return map[string]*model.Profile{
		"empty":             model.New(),
		"sample":            modeltest.Sample(),
		"sample composite":  modeltest.SampleComposite(),
		"composite":         composite(),
		"sampled":           modeltest.Sampled(),
		"cpp":               modeltest.CPP(),
		"counted":           modeltest.Counted(),
		"counted composite": countedComposite(),
		"synthetic":         modeltest.Synthetic(20_000, 8, 3),
		"detail":            detail,
		"busy":              modeltest.Sample().Busy(),
		"busy composite":    modeltest.SampleComposite().Busy(),
		"cpu sampled":       modeltest.CPUSampled(),
		"cpu sampled busy":  modeltest.CPUSampled().Busy(),
		"compensated":       compensated,
		"sample-v1.data":    mustRead("testdata/sample-v1.data"),
		"read after repair": mustRead(defectFile),
		"written after repair": func() *model.Profile {
			var buf bytes.Buffer
			if err := model.Write(&buf, withDefect()); err != nil {
				panic(err)
			}
			p, err := model.Read(&buf)
			if err != nil {
				panic(err)
			}
			return p
		}(),
	}
}

func mustRead(path string) *model.Profile {
	p, err := model.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return p
}

// A repair never fires on a valid profile.
func TestRepairLeavesValidProfilesAlone(t *testing.T) {
	for name, p := range validProfiles() {
		t.Run(name, func(t *testing.T) {
			if err := p.Validate(); err != nil {
				t.Fatalf("invalid: %v", err)
			}
			want := fmt.Sprintf("%+v", p)
			if got := p.Repair(); got != nil {
				t.Fatalf("Repair() = %q", got)
			}
			if fmt.Sprintf("%+v", p) != want {
				t.Fatal("Repair changed a valid profile")
			}
		})
	}
}
