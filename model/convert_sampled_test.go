package model

import (
	"reflect"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model/pb"
)

// sampledComposite is a composite thread of two members with sampled
// times in every column: nodes, shares, and what prune folded away.
func sampledComposite() *Thread {
	return &Thread{Tid: 1, Members: []Member{{Tid: 1}, {Tid: 2}}, Nodes: []Node{
		{Func: StartFunc, Parent: None, SampledNs: 5, DroppedSampledNs: 7, Contribs: []Contrib{
			{Member: 0, SampledNs: 5, DroppedSampledNs: 3}, {Member: 1, DroppedSampledNs: 4}}},
		{Func: 1, Parent: 0, Calls: 2, SampledNs: 30, Contribs: []Contrib{
			{Member: 0, Calls: 1, SampledNs: 10}, {Member: 1, Calls: 1, SampledNs: 20}}},
	}}
}

// The sampled columns are written only when something was sampled (a
// file without samples is as before them), read back whole, read as
// zeros when absent (an older file), and refused at any other length.
func TestSampledColumns(t *testing.T) {
	plain := &Thread{Tid: 1, Nodes: []Node{{Func: StartFunc, Parent: None, SelfNs: 9}}}
	if c := encodeThread(plain, newStrtab()).Nodes; c.SampledNs != nil || c.DroppedSampledNs != nil {
		t.Fatalf("columns written without samples: %v, %v", c.SampledNs, c.DroppedSampledNs)
	}
	th := sampledComposite()
	c := encodeThread(th, newStrtab()).Nodes
	d := &decoder{}
	if got := d.nodes(c); d.err != nil || !reflect.DeepEqual(got, th.Nodes) {
		t.Fatalf("nodes read back as %+v (%v), want %+v", got, d.err, th.Nodes)
	}
	old := encodeThread(plain, newStrtab()).Nodes
	if got := d.nodes(old); d.err != nil || got[0].SampledNs != 0 || got[0].DroppedSampledNs != 0 {
		t.Fatalf("an older file's nodes read as %+v (%v)", got, d.err)
	}
	for name, cut := range map[string]func(n *pb.Nodes){
		"sampled_ns":                 func(n *pb.Nodes) { n.SampledNs = n.SampledNs[1:] },
		"dropped_sampled_ns":         func(n *pb.Nodes) { n.DroppedSampledNs = n.DroppedSampledNs[1:] },
		"contrib_sampled_ns":         func(n *pb.Nodes) { n.ContribSampledNs = n.ContribSampledNs[1:] },
		"contrib_dropped_sampled_ns": func(n *pb.Nodes) { n.ContribDroppedSampledNs = n.ContribDroppedSampledNs[1:] },
	} {
		t.Run("short "+name, func(t *testing.T) {
			c := encodeThread(sampledComposite(), newStrtab()).Nodes
			cut(c)
			d := &decoder{}
			if nodes := d.nodes(c); nodes != nil || d.err == nil || !strings.Contains(d.err.Error(), "of different lengths") {
				t.Fatalf("nodes %+v, err %v; want columns of different lengths", nodes, d.err)
			}
		})
	}
}

// How the CPU time was sampled goes to the file and back; a file without
// it (older, or not sampled) reads as not sampled.
func TestCPUSamplesInFile(t *testing.T) {
	for name, in := range map[string]*CPUSamples{
		"sampled":     {PeriodNs: 250_000, Samples: 12_345, Kernel: 100, InProbes: 395, Lost: 3, WithKernel: true, NotSampled: "why"},
		"not sampled": nil,
	} {
		t.Run(name, func(t *testing.T) {
			p, err := decode(encode(&Profile{Meta: Meta{CPUSamples: in}}))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Meta.CPUSamples, in) {
				t.Fatalf("read %+v, want %+v", p.Meta.CPUSamples, in)
			}
		})
	}
}
