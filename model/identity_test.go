package model_test

import (
	"slices"
	"testing"

	"github.com/profile-dev/profile/model"
)

// two builds of one program in different directories, with one function
// each of their own and a library function in both
func twoBuilds() (a, b *model.Profile) {
	build := func(exe string, names ...string) *model.Profile {
		p := model.New()
		in := model.NewInterner(p)
		m := in.Module(exe, "")
		libc := in.Module("/lib/libc.so.6", "")
		for _, n := range names {
			in.Func(m, n)
		}
		in.Func(libc, "write")
		return p
	}
	return build("/ci/base/app", "main", "old"), build("/ci/head/app", "new", "main")
}

func TestFuncMap(t *testing.T) {
	a, b := twoBuilds()
	cases := []struct {
		match      model.Matching
		numsA      []int // START, main, old, write
		numsB      []int // START, new, main, write
		sortedIDs  []model.FuncID
		sortedNumB []int
	}{
		{match: model.ByBaseName, numsA: []int{0, 1, 2, 3}, numsB: []int{0, 4, 1, 3},
			sortedIDs:  []model.FuncID{{"", "START"}, {"app", "main"}, {"app", "new"}, {"app", "old"}, {"libc.so.6", "write"}},
			sortedNumB: []int{0, 2, 1, 4}},
		{match: model.ByPath, numsA: []int{0, 1, 2, 3}, numsB: []int{0, 4, 5, 3},
			sortedIDs: []model.FuncID{{"", "START"}, {"/ci/base/app", "main"}, {"/ci/base/app", "old"},
				{"/ci/head/app", "main"}, {"/ci/head/app", "new"}, {"/lib/libc.so.6", "write"}},
			sortedNumB: []int{0, 4, 3, 5}},
	}
	for _, c := range cases {
		m := model.NewFuncMap(c.match)
		if got := m.Add(a); !slices.Equal(got, c.numsA) {
			t.Errorf("match %d: Add(a) = %v, want %v", c.match, got, c.numsA)
		}
		if got := m.Add(b); !slices.Equal(got, c.numsB) {
			t.Errorf("match %d: Add(b) = %v, want %v", c.match, got, c.numsB)
		}
		m.Sort()
		if !slices.Equal(m.IDs, c.sortedIDs) {
			t.Errorf("match %d: sorted IDs %v, want %v", c.match, m.IDs, c.sortedIDs)
		}
		// adding again maps onto the sorted numbers, adds nothing
		if got := m.Add(b); !slices.Equal(got, c.sortedNumB) || len(m.IDs) != len(c.sortedIDs) {
			t.Errorf("match %d: Add(b) after Sort = %v (%d ids), want %v", c.match, got, len(m.IDs), c.sortedNumB)
		}
		for n, id := range m.IDs {
			if got, ok := m.Lookup(id); !ok || got != n {
				t.Errorf("match %d: Lookup(%v) = %d, %t, want %d", c.match, id, got, ok, n)
			}
		}
		if _, ok := m.Lookup(model.FuncID{Module: "app", Name: "gone"}); ok {
			t.Errorf("match %d: Lookup of an unknown function succeeded", c.match)
		}
	}
}

func TestFuncID(t *testing.T) {
	a, _ := twoBuilds()
	want := []model.FuncID{{"", "START"}, {"/ci/base/app", "main"}, {"/ci/base/app", "old"}, {"/lib/libc.so.6", "write"}}
	for f, w := range want {
		if got := a.FuncID(f); got != w {
			t.Errorf("FuncID(%d) = %v, want %v", f, got, w)
		}
	}
	if model.CompareFuncIDs(want[1], want[2]) >= 0 || model.CompareFuncIDs(want[3], want[1]) <= 0 ||
		model.CompareFuncIDs(want[2], want[2]) != 0 {
		t.Error("CompareFuncIDs does not order by module, then name")
	}
}
