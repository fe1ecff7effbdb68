package model

import (
	"bytes"
	"testing"
)

// Detached goes to the file and back; an older file's detach, said as a
// reason for being partial, reads as detached and not partial.
func TestDetachedInFile(t *testing.T) {
	for _, c := range []struct {
		name              string
		in                Meta // as written
		partial, detached bool
		reason            string
	}{
		{name: "detached", in: Meta{Detached: true}, detached: true},
		{name: "detached, calls dropped", in: Meta{Detached: true, Partial: true, PartialReason: "calls dropped"},
			partial: true, detached: true, reason: "calls dropped"},
		{name: "complete", in: Meta{}},
		{name: "crashed", in: Meta{Partial: true, PartialReason: "target crashed: SIGSEGV"},
			partial: true, reason: "target crashed: SIGSEGV"},
		{name: "older file, detached", in: Meta{Partial: true, PartialReason: "detached before the target ended"},
			detached: true},
		{name: "older merged file", in: Meta{Partial: true, PartialReason: "detached before the target ended; target crashed"},
			partial: true, detached: true, reason: "target crashed"},
		{name: "not partial", in: Meta{PartialReason: "detached before the target ended"},
			reason: "detached before the target ended"},
	} {
		p := New()
		p.Meta = c.in
		var b bytes.Buffer
		if err := Write(&b, p); err != nil {
			t.Fatal(err)
		}
		got, err := Read(&b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		m := got.Meta
		if m.Partial != c.partial || m.Detached != c.detached || m.PartialReason != c.reason {
			t.Errorf("%s: read partial %v (%q), detached %v; want %v (%q), %v", c.name, m.Partial, m.PartialReason,
				m.Detached, c.partial, c.reason, c.detached)
		}
	}
}
