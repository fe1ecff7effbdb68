package model

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// WriteUnchecked encodes a profile without Repair or Validate, for the
// external tests: files as a build before Write repaired wrote them.
var WriteUnchecked = writeUnchecked

// small is a valid profile of n threads, each START (100 ns of self time)
// → f (600 ns self, 900 total) → g (300 ns self and total): 1000 ns traced.
func small(n int) *Profile {
	p := New()
	p.Modules = append(p.Modules, Module{Path: "/bin/app"})
	p.Functions = append(p.Functions, Function{Module: 1, Name: "f"}, Function{Module: 1, Name: "g"})
	p.Processes = []Process{{Pid: 10, Parent: None, ForkedBy: None, ExecOf: None, Exe: "/bin/app"}}
	for i := range n {
		p.Threads = append(p.Threads, Thread{Tid: 10 + i, SpawnedBy: None, TracedNs: 1000, Nodes: []Node{
			{Func: StartFunc, Parent: None, SelfNs: 100},
			{Func: 1, Parent: 0, Calls: 1, SelfNs: 600, TotalNs: 900},
			{Func: 2, Parent: 1, Calls: 3, SelfNs: 300, TotalNs: 300},
		}})
	}
	return p
}

// smallComposite makes thread 0 of small a composite of two members, as
// merge would: member 0 (660 ns traced) and member 1 (340 ns) share every
// node.
func smallComposite(n int) *Profile {
	p := small(n)
	t := &p.Threads[0]
	t.Members = []Member{{Pid: 10, Tid: 10, SpawnedBy: None, TracedNs: 660}, {Run: 1, Pid: 10, Tid: 20, SpawnedBy: None, TracedNs: 340}}
	t.Nodes[0].Contribs = []Contrib{{Member: 0, SelfNs: 60}, {Member: 1, SelfNs: 40}}
	t.Nodes[1].Contribs = []Contrib{{Member: 0, Calls: 1, SelfNs: 400, TotalNs: 600}, {Member: 1, SelfNs: 200, TotalNs: 300}}
	t.Nodes[2].Contribs = []Contrib{{Member: 0, Calls: 2, SelfNs: 200, TotalNs: 200}, {Member: 1, Calls: 1, SelfNs: 100, TotalNs: 100}}
	return p
}

func TestRepair(t *testing.T) {
	cases := []struct {
		name   string
		build  func() *Profile
		break_ func(p *Profile)
		want   []string
		check  func(t *testing.T, p *Profile)
	}{
		{"self times above the traced time", func() *Profile { return small(2) },
			func(p *Profile) { p.Threads[1].Nodes[2].SelfNs += 50 },
			[]string{"thread 1 (tid 11): self times added up to 1050 ns against a traced time of 1000 ns (off by 50 ns, a measurement error): traced time set to their sum"},
			func(t *testing.T, p *Profile) {
				if th := p.Threads[1]; th.TracedNs != 1050 || th.Nodes[2].SelfNs != 350 {
					t.Errorf("traced %d, self %d", th.TracedNs, th.Nodes[2].SelfNs)
				}
			}},
		{"self times below the traced time", func() *Profile { return small(1) },
			func(p *Profile) { p.Threads[0].Nodes[0].SelfNs -= 30 },
			[]string{"thread 0 (tid 10): self times added up to 970 ns against a traced time of 1000 ns (off by 30 ns, a measurement error): traced time set to their sum"},
			func(t *testing.T, p *Profile) {
				if p.Threads[0].TracedNs != 970 {
					t.Errorf("traced %d", p.Threads[0].TracedNs)
				}
			}},
		{"total above the traced time", func() *Profile { return small(1) },
			func(p *Profile) { p.Threads[0].Nodes[1].TotalNs, p.Threads[0].Nodes[2].TotalNs = 1200, 1001 },
			[]string{"thread 0 (tid 10): 2 node totals above the traced time by up to 200 ns (a measurement error): clamped to it"},
			func(t *testing.T, p *Profile) {
				if n := p.Threads[0].Nodes; n[1].TotalNs != 1000 || n[2].TotalNs != 1000 || p.Threads[0].TracedNs != 1000 {
					t.Errorf("totals %d %d", n[1].TotalNs, n[2].TotalNs)
				}
			}},
		{"self sum repaired before totals are judged", func() *Profile { return small(1) },
			// a call measured 150 ns too long: its self, its total and its caller's
			func(p *Profile) {
				n := p.Threads[0].Nodes
				n[2].SelfNs, n[2].TotalNs, n[1].TotalNs = 450, 450, 1050
			},
			[]string{"thread 0 (tid 10): self times added up to 1150 ns against a traced time of 1000 ns (off by 150 ns, a measurement error): traced time set to their sum"},
			nil},
		{"detail call ending before it starts", func() *Profile { return small(1) },
			func(p *Profile) {
				p.Threads[0].Trees = []DetailTree{{Calls: []DetailCall{
					{Func: 1, StartNs: 100, EndNs: 900}, {Func: 2, Depth: 1, StartNs: 500, EndNs: 480}, {Func: 2, Depth: 1, StartNs: 600, EndNs: 595},
				}}}
			},
			[]string{"thread 0 (tid 10): 2 detail calls ending up to 20 ns before the start (a measurement error): ended at the start"},
			func(t *testing.T, p *Profile) {
				c := p.Threads[0].Trees[0].Calls
				if c[0].EndNs != 900 || c[1].EndNs != 500 || c[2].EndNs != 600 {
					t.Errorf("calls %+v", c)
				}
			}},
		{"every repair of a thread on one line", func() *Profile { return small(1) },
			func(p *Profile) {
				p.Threads[0].Nodes[0].SelfNs += 7
				p.Threads[0].Nodes[1].TotalNs = 2000
				p.Threads[0].Trees = []DetailTree{{Calls: []DetailCall{{Func: 1, StartNs: 100, EndNs: 99}}}}
			},
			[]string{"thread 0 (tid 10): self times added up to 1007 ns against a traced time of 1000 ns (off by 7 ns, a measurement error): traced time set to their sum; " +
				"1 node total above the traced time by up to 993 ns (a measurement error): clamped to it; " +
				"1 detail call ending up to 1 ns before the start (a measurement error): ended at the start"},
			nil},
		{"composite: members take their own sums", func() *Profile { return smallComposite(1) },
			func(p *Profile) {
				p.Threads[0].Nodes[2].SelfNs += 50
				p.Threads[0].Nodes[2].Contribs[1].SelfNs += 50
			},
			[]string{"thread 0 (tid 10): self times added up to 1050 ns against a traced time of 1000 ns (off by 50 ns, a measurement error): traced time set to their sum, each member's to the sum of its own"},
			func(t *testing.T, p *Profile) {
				if m := p.Threads[0].Members; m[0].TracedNs != 660 || m[1].TracedNs != 390 {
					t.Errorf("members %+v", m)
				}
			}},
		{"composite with pruned time: members kept", func() *Profile { return smallComposite(1) },
			func(p *Profile) { p.Threads[0].Nodes[1].DroppedNs = 20 },
			[]string{"thread 0 (tid 10): self times added up to 1020 ns against a traced time of 1000 ns (off by 20 ns, a measurement error): traced time set to their sum (its members' kept: the time prune folded away is not split by member)"},
			func(t *testing.T, p *Profile) {
				if m := p.Threads[0].Members; p.Threads[0].TracedNs != 1020 || m[0].TracedNs != 660 || m[1].TracedNs != 340 {
					t.Errorf("traced %d, members %+v", p.Threads[0].TracedNs, m)
				}
			}},
		{"composite total: shares cut to their members", func() *Profile { return smallComposite(1) },
			func(p *Profile) {
				p.Threads[0].Nodes[1].TotalNs += 500
				p.Threads[0].Nodes[1].Contribs[1].TotalNs += 500
			},
			[]string{"thread 0 (tid 10): 1 node total above the traced time by up to 400 ns (a measurement error): clamped to it"},
			func(t *testing.T, p *Profile) {
				if n := p.Threads[0].Nodes[1]; n.TotalNs != 940 || n.Contribs[0].TotalNs != 600 || n.Contribs[1].TotalNs != 340 {
					t.Errorf("node %+v", n)
				}
			}},
		{"many threads summed up", func() *Profile { return small(20) },
			func(p *Profile) {
				for i := range p.Threads {
					p.Threads[i].Nodes[2].SelfNs += int64(i + 1)
				}
				p.Threads[19].Nodes[1].TotalNs = 5000
			},
			[]string{
				"thread 0 (tid 10): self times added up to 1001 ns against a traced time of 1000 ns (off by 1 ns, a measurement error): traced time set to their sum",
				"thread 1 (tid 11): self times added up to 1002 ns against a traced time of 1000 ns (off by 2 ns, a measurement error): traced time set to their sum",
				"thread 2 (tid 12): self times added up to 1003 ns against a traced time of 1000 ns (off by 3 ns, a measurement error): traced time set to their sum",
				"... and 17 more threads (measurement errors): traced time set to the sum of the self times in 17 (off by up to 20 ns), 1 node total clamped to the traced time (above by up to 3980 ns)",
			}, nil},
		{"four threads all told", func() *Profile { return small(4) },
			func(p *Profile) {
				for i := range p.Threads {
					p.Threads[i].Trees = []DetailTree{{Calls: []DetailCall{{Func: 1, StartNs: 10, EndNs: 9}}}}
				}
			},
			[]string{
				"thread 0 (tid 10): 1 detail call ending up to 1 ns before the start (a measurement error): ended at the start",
				"thread 1 (tid 11): 1 detail call ending up to 1 ns before the start (a measurement error): ended at the start",
				"thread 2 (tid 12): 1 detail call ending up to 1 ns before the start (a measurement error): ended at the start",
				"thread 3 (tid 13): 1 detail call ending up to 1 ns before the start (a measurement error): ended at the start",
			}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.build()
			if err := p.Validate(); err != nil {
				t.Fatalf("built invalid: %v", err)
			}
			c.break_(p)
			var ie *InvariantError
			if err := p.Validate(); !asInvariant(err, &ie) || !ie.Measurement {
				t.Fatalf("broken profile: Validate() = %v, want a measurement error", err)
			}
			got := p.Repair()
			if !slices.Equal(got, c.want) {
				t.Fatalf("Repair() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("after Repair: %v", err)
			}
			if c.check != nil {
				c.check(t, p)
			}
			if again := p.Repair(); again != nil {
				t.Fatalf("second Repair() = %q", again)
			}
		})
	}
}

func asInvariant(err error, ie **InvariantError) bool { return errors.As(err, ie) }

// A composite node whose member shares, each within its member's traced
// time, still exceed the thread's is damage, not a measurement: refused
// as structural, nothing repaired.
func TestRepairRefusesCompositeThatCannotAddUp(t *testing.T) {
	p := smallComposite(1)
	th := &p.Threads[0]
	th.Members[0].TracedNs = 1000 // members now add up to more than the thread
	th.Nodes[1].TotalNs = 1200
	th.Nodes[1].Contribs[0].TotalNs = 900
	want := clone(p)
	if got := p.Repair(); got != nil {
		t.Fatalf("Repair() = %q", got)
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatal("Repair changed a profile it could not repair")
	}
	err := p.Validate()
	var ie *InvariantError
	if !asInvariant(err, &ie) || ie.Measurement || !strings.Contains(err.Error(), "members' shares") {
		t.Fatalf("Validate() = %v, want a structural error on the shares", err)
	}
}

// Repair leaves a structurally broken profile to Validate, even where it
// also has what Repair would fix.
func TestRepairLeavesStructuralErrors(t *testing.T) {
	p := small(2)
	p.Threads[0].Nodes[2].SelfNs += 5
	p.Threads[1].Nodes[1].Calls = -1
	want := clone(p)
	if got := p.Repair(); got != nil {
		t.Fatalf("Repair() = %q", got)
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatal("Repair changed a structurally broken profile")
	}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "negative value") {
		t.Fatalf("Validate() = %v", err)
	}
}

// A shallow copy is repaired without writing into what it shares with the
// original (Write repairs a snapshot whose nodes a session still uses).
func TestRepairCopiesWhatItChanges(t *testing.T) {
	p := smallComposite(2)
	p.Threads[0].Nodes[1].TotalNs += 500
	p.Threads[0].Nodes[1].Contribs[1].TotalNs += 500
	p.Threads[0].Nodes[2].SelfNs += 50
	p.Threads[0].Nodes[2].Contribs[1].SelfNs += 50
	p.Threads[1].Trees = []DetailTree{{Calls: []DetailCall{{Func: 1, StartNs: 10, EndNs: 9}}}}
	want := clone(p)
	q := *p
	q.Threads = slices.Clone(p.Threads)
	if got := q.Repair(); len(got) != 2 {
		t.Fatalf("Repair() = %q", got)
	}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatal("repairing a shallow copy changed the original")
	}
}

// clone deep-copies what Repair may change.
func clone(p *Profile) *Profile {
	q := *p
	q.Threads = slices.Clone(p.Threads)
	for i := range q.Threads {
		t := &q.Threads[i]
		t.Members = slices.Clone(t.Members)
		t.Nodes = slices.Clone(t.Nodes)
		for k := range t.Nodes {
			t.Nodes[k].Contribs = slices.Clone(t.Nodes[k].Contribs)
		}
		t.Trees = slices.Clone(t.Trees)
		for k := range t.Trees {
			t.Trees[k].Calls = slices.Clone(t.Trees[k].Calls)
		}
	}
	return &q
}

func ExampleProfile_Repair() {
	p := small(1)
	p.Threads[0].Nodes[2].SelfNs += 161_230
	fmt.Println(p.Repair()[0])
	// Output: thread 0 (tid 10): self times added up to 162230 ns against a traced time of 1000 ns (off by 161230 ns, a measurement error): traced time set to their sum
}
