package merge

import (
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// A merged function's TracedSinceNs is the largest of the inputs that have
// it; a function in one input only keeps its own.
func TestTracedSince(t *testing.T) {
	since := func(p *model.Profile, set map[string]int64) *model.Profile {
		for f := range p.Functions {
			if ns, ok := set[p.FuncName(f)]; ok {
				p.Functions[f].TracedSinceNs = ns
			}
		}
		return p
	}
	cases := []struct {
		name string
		a, b map[string]int64
		want map[string]int64
	}{
		{"none", nil, nil, map[string]int64{"compute": 0, "worker": 0}},
		{"one input later", map[string]int64{"compute": 2e9}, nil, map[string]int64{"compute": 2e9, "worker": 0}},
		{"largest wins", map[string]int64{"compute": 2e9, "worker": 5}, map[string]int64{"compute": 3e9, "worker": 4},
			map[string]int64{"compute": 3e9, "worker": 5}},
		// spawner has spawn_helper, attached has not: its value stays
		{"only in one input", map[string]int64{"spawn_helper": 7e8}, nil, map[string]int64{"spawn_helper": 7e8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := since(spawner(), c.a), since(attached(), c.b)
			for _, m := range []*model.Profile{
				mustMerge(t, Run{"a", a}, Run{"b", b}),
				mustMerge(t, Run{"b", b}, Run{"a", a}),
				// merging is associative: a composite input keeps its largest
				mustMerge(t, Run{"ab", mustMerge(t, Run{"a", a}, Run{"b", b})}, Run{"c", modeltest.Sample()}),
			} {
				for name, want := range c.want {
					f := funcNamed(t, m, name)
					if got := m.Functions[f].TracedSinceNs; got != want {
						t.Errorf("%s traced since %d ns, want %d", name, got, want)
					}
				}
			}
		})
	}
}

// funcNamed is /bin/pool's function name (Sample's /bin/app has some of
// the same names).
func funcNamed(t *testing.T, p *model.Profile, name string) int {
	t.Helper()
	for f := range p.Functions {
		if p.FuncID(f) == (model.FuncID{Module: "/bin/pool", Name: name}) {
			return f
		}
	}
	t.Fatalf("no function %q", name)
	return -1
}

// A merged function's probe kind is the inputs' when they agree (the
// least note), unknown when they differ; its TracedUntilNs the earliest
// set. Neither depends on the inputs' order.
func TestProbeKinds(t *testing.T) {
	type probe struct {
		kind  model.ProbeKind
		note  string
		until int64
	}
	set := func(p *model.Profile, pr probe) *model.Profile {
		f := funcNamed(t, p, "compute")
		p.Functions[f].Probe, p.Functions[f].ProbeNote, p.Functions[f].TracedUntilNs = pr.kind, pr.note, pr.until
		return p
	}
	cases := []struct {
		name    string
		a, b    probe
		want    probe
		wantAll probe // merged once more with an input that has no kinds
	}{
		{"agree", probe{model.ProbeTrap, "returns twice", 0}, probe{model.ProbeTrap, "returns twice", 0},
			probe{model.ProbeTrap, "returns twice", 0}, probe{model.ProbeUnknown, probesDisagree, 0}},
		{"least note", probe{model.ProbeTrap, "b", 9}, probe{model.ProbeTrap, "a", 4},
			probe{model.ProbeTrap, "a", 4}, probe{model.ProbeUnknown, probesDisagree, 4}},
		{"differ", probe{model.ProbeInline, "", 0}, probe{model.ProbeTrap, "x", 3},
			probe{model.ProbeUnknown, probesDisagree, 3}, probe{model.ProbeUnknown, probesDisagree, 3}},
		{"neither recorded", probe{}, probe{}, probe{}, probe{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(m *model.Profile, want probe) {
				t.Helper()
				fn := m.Functions[funcNamed(t, m, "compute")]
				if got := (probe{fn.Probe, fn.ProbeNote, fn.TracedUntilNs}); got != want {
					t.Errorf("merged probe %+v, want %+v", got, want)
				}
			}
			a, b := set(spawner(), c.a), set(attached(), c.b)
			check(mustMerge(t, Run{"a", a}, Run{"b", b}), c.want)
			check(mustMerge(t, Run{"b", b}, Run{"a", a}), c.want)
			check(mustMerge(t, Run{"ab", mustMerge(t, Run{"a", a}, Run{"b", b})}, Run{"c", attached()}), c.wantAll)
			check(mustMerge(t, Run{"c", attached()}, Run{"ba", mustMerge(t, Run{"b", b}, Run{"a", a})}), c.wantAll)
		})
	}
}
