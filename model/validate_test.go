package model_test

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestValidateCatchesEachInvariant(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(p *model.Profile)
		want   string
	}{
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
		{"self times do not add up", func(p *model.Profile) { p.Threads[0].Nodes[1].SelfNs++ }, "self times add up to"},
		{"total above traced", func(p *model.Profile) { p.Threads[0].Nodes[1].TotalNs = p.Threads[0].TracedNs + 1 }, "exceeds the thread's traced time"},
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
	}
	if err := modeltest.Sample().Validate(); err != nil {
		t.Fatalf("sample invalid: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := modeltest.Sample()
			c.break_(p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want %q", err, c.want)
			}
		})
	}
}
