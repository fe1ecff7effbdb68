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
