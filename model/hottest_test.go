package model

import (
	"slices"
	"testing"
)

func TestHottestSelf(t *testing.T) {
	p := &Profile{
		Functions: []Function{{Name: StartName}, {Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}},
		Threads: []Thread{
			{Nodes: []Node{{Func: StartFunc, Parent: None, SelfNs: 99}, {Func: 1, SelfNs: 10}, {Func: 2, SelfNs: 30}, {Func: 1, SelfNs: 15}}},
			{Nodes: []Node{{Func: StartFunc, Parent: None}, {Func: 3, SelfNs: 25}, {Func: 4}}},
		},
	}
	for _, tc := range []struct {
		name string
		n    int
		skip func(int) bool
		want []FuncSelf
	}{
		{"all, summed over threads, ties by index", 10, nil, []FuncSelf{{2, 30}, {1, 25}, {3, 25}}},
		{"top one", 1, nil, []FuncSelf{{2, 30}}},
		{"skipped", 2, func(fn int) bool { return fn == 2 }, []FuncSelf{{1, 25}, {3, 25}}},
		{"none", 0, nil, []FuncSelf{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := p.HottestSelf(tc.n, tc.skip)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
