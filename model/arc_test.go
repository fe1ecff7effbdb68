package model_test

import (
	"reflect"
	"testing"

	"github.com/profile-dev/profile/model"
)

func TestSortArcs(t *testing.T) {
	none := model.None
	cases := []struct {
		name string
		in   []model.Arc
		want []model.Arc
	}{
		{"nil", nil, nil},
		{"only zero calls", []model.Arc{{Caller: 1, Callee: 2}}, nil},
		{"sorted by callee, then caller (None first)",
			[]model.Arc{{Caller: 3, Callee: 5, Calls: 1}, {Caller: 1, Callee: 4, Calls: 2}, {Caller: none, Callee: 5, Calls: 3}},
			[]model.Arc{{Caller: 1, Callee: 4, Calls: 2}, {Caller: none, Callee: 5, Calls: 3}, {Caller: 3, Callee: 5, Calls: 1}}},
		{"a pair twice is summed",
			[]model.Arc{{Caller: 2, Callee: 4, Calls: 5}, {Caller: 1, Callee: 4, Calls: 1}, {Caller: 2, Callee: 4, Calls: 7}},
			[]model.Arc{{Caller: 1, Callee: 4, Calls: 1}, {Caller: 2, Callee: 4, Calls: 12}}},
		{"zero calls dropped, after summing",
			[]model.Arc{{Caller: 1, Callee: 4}, {Caller: 2, Callee: 4, Calls: 1}, {Caller: 1, Callee: 4}},
			[]model.Arc{{Caller: 2, Callee: 4, Calls: 1}}},
		{"member shares merged by member",
			[]model.Arc{
				{Caller: 1, Callee: 4, Calls: 3, Contribs: []model.ArcContrib{{Member: 0, Calls: 1}, {Member: 2, Calls: 2}}},
				{Caller: 1, Callee: 4, Calls: 5, Contribs: []model.ArcContrib{{Member: 1, Calls: 1}, {Member: 2, Calls: 4}}},
			},
			[]model.Arc{{Caller: 1, Callee: 4, Calls: 8,
				Contribs: []model.ArcContrib{{Member: 0, Calls: 1}, {Member: 1, Calls: 1}, {Member: 2, Calls: 6}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := model.SortArcs(c.in); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("SortArcs = %+v, want %+v", got, c.want)
			}
		})
	}
}

// SortArcs never makes two arcs share a member list: summing into one
// must leave the input's lists as they were.
func TestSortArcsCopiesShares(t *testing.T) {
	shares := []model.ArcContrib{{Member: 0, Calls: 1}}
	in := []model.Arc{{Caller: 1, Callee: 4, Calls: 1, Contribs: shares}, {Caller: 1, Callee: 4, Calls: 1,
		Contribs: []model.ArcContrib{{Member: 0, Calls: 1}}}}
	model.SortArcs(in)
	if shares[0].Calls != 1 {
		t.Fatalf("input shares changed: %+v", shares)
	}
}
