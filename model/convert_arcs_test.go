package model

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/model/pb"
)

// Damaged arc columns are an error on reading, never a panic or arcs
// made up; no columns at all (an older file) read as no arcs.
func TestDecodeArcs(t *testing.T) {
	cases := []struct {
		name string
		c    *pb.Arcs
		want string // "" = no error
	}{
		{"older file", nil, ""},
		{"columns of different lengths", &pb.Arcs{CallerPlus1: []int64{0}, Callee: []int64{1, 2}, Calls: []int64{1, 1}},
			"arc columns of different lengths"},
		{"shares of another length", &pb.Arcs{CallerPlus1: []int64{0}, Callee: []int64{1}, Calls: []int64{1},
			ContribCount: []int64{1}, ContribMember: []int64{0}}, "arc contribution columns do not match"},
		{"share counts beyond the shares", &pb.Arcs{CallerPlus1: []int64{0}, Callee: []int64{1}, Calls: []int64{1},
			ContribCount: []int64{2}, ContribMember: []int64{0}, ContribCalls: []int64{1}}, "arc contribution counts exceed"},
		{"shares left over", &pb.Arcs{CallerPlus1: []int64{0}, Callee: []int64{1}, Calls: []int64{1},
			ContribCount: []int64{0}, ContribMember: []int64{0}, ContribCalls: []int64{1}}, "arc contributions left over"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &decoder{}
			arcs := d.arcs(c.c)
			switch {
			case c.want == "" && (d.err != nil || arcs != nil):
				t.Fatalf("arcs %+v, err %v; want none, no error", arcs, d.err)
			case c.want != "" && (d.err == nil || !strings.Contains(d.err.Error(), c.want)):
				t.Fatalf("err %v, want %q", d.err, c.want)
			}
		})
	}
}
