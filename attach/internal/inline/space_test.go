package inline

import (
	"bytes"
	"testing"

	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
)

// Changes lists the call sites before the entry patches, in the order a
// detach puts them back (a site's fast path jumps into its function's
// entry patch, so no site may outlive the patch it leads into, even for
// a tracer killed between two writes), and a site inside an entry
// patch's bytes after that patch (its bytes come back with the patch).
func TestChangesPutsSitesBackFirst(t *testing.T) {
	s := New[int](0x10000, stub.DataSize)
	for _, at := range []uint64{0x1000, 0x2000} {
		s.Patches[at] = &Patch{Patch: instrument.Patch{At: at, Len: 9, InPlace: 3,
			Orig: []byte{0x48, 0x83, 0xec, 0x08, 0xe8, 1, 2, 3, 4}, Jump: []byte{0xe9, 0, 0, 0, 0, 0xcc, 0x41, 0xff, 0xd3}}}
	}
	s.Patches[0x3000] = &Patch{Patch: instrument.Patch{At: 0x3000}} // none written
	call := func(at uint64) instrument.SiteBytes {
		return instrument.SiteBytes{At: at, Orig: []byte{0xe8, 1, 0, 0, 0}, New: []byte{0xe8, 2, 0, 0, 0}}
	}
	for _, at := range []uint64{0x5000, 0x6000, 0x7000, 0x2004} {
		s.Sites[at] = call(at)
	}
	var kinds []string
	for _, c := range s.Changes() {
		switch _, site := s.Sites[c.At]; {
		case !site:
			kinds = append(kinds, "entry")
		case c.At == 0x2004:
			kinds = append(kinds, "inside")
		default:
			kinds = append(kinds, "site")
		}
	}
	want := []string{"site", "site", "site", "entry", "entry", "inside"}
	if len(kinds) != len(want) {
		t.Fatalf("changes %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("changes %v, want %v", kinds, want)
		}
	}
}

// TestOverlay: the sites re-aimed over a function's bytes are written
// onto them, a site reaching in from the page before its start or out
// past its end in part, a site elsewhere not at all; whether the sites
// came before the first overlay (the page index is built from them) or
// after it (indexed as they come), in a forked space (its index built
// afresh), and not a site deleted since it was indexed.
func TestOverlay(t *testing.T) {
	const addr = 0x1000
	site := func(at uint64, b ...byte) instrument.SiteBytes {
		return instrument.SiteBytes{At: at, Orig: make([]byte, len(b)), New: b}
	}
	sites := []instrument.SiteBytes{
		site(addr-2, 0xc0, 0xc1, 0xc2, 0xc3), // reaches in: its last two bytes
		site(addr+3, 0xe8, 1, 2, 3, 4),
		site(addr+9, 0xe9, 5, 6, 7, 8), // reaches out: its first byte
		site(addr-9, 0xeb, 0xfe),       // ends before
		site(addr+10, 0xeb, 0xfe),      // starts after
		site(0x9000, 0xe8, 0, 0, 0, 0), // pages away
	}
	want := []byte{0xc2, 0xc3, 0, 0xe8, 1, 2, 3, 4, 0, 0xe9}
	overlay := func(s *Space[int]) []byte {
		b := make([]byte, 10)
		s.Overlay(addr, b)
		return b
	}
	for _, c := range []struct {
		name string
		make func() *Space[int]
	}{
		{"indexed at the first overlay", func() *Space[int] {
			s := New[int](0, 0)
			for _, c := range sites {
				s.SetSite(c)
			}
			return s
		}},
		{"indexed as they come", func() *Space[int] {
			s := New[int](0, 0)
			s.SetSite(site(0x5000, 0xe8, 0, 0, 0, 0))
			overlay(s)
			for _, c := range sites {
				s.SetSite(c)
			}
			return s
		}},
		{"forked", func() *Space[int] {
			s := New[int](0, 0)
			for _, c := range sites {
				s.SetSite(c)
			}
			overlay(s)
			return s.Fork(-1)
		}},
		{"one deleted", func() *Space[int] {
			s := New[int](0, 0)
			for _, c := range append(sites, site(addr+6, 0xcc)) {
				s.SetSite(c)
			}
			overlay(s)
			delete(s.Sites, addr+6)
			return s
		}},
	} {
		if b := overlay(c.make()); !bytes.Equal(b, want) {
			t.Errorf("%s: % x, want % x", c.name, b, want)
		}
	}
}

// TestInSpans: a site is inside the entry patches when any of its bytes
// is one of theirs, from before a patch's start, within it, or reaching
// past its end; not when it ends where a patch begins or begins where one
// ends.
func TestInSpans(t *testing.T) {
	spans := []instrument.Patch{{At: 0x100, Len: 5}, {At: 0x105, Len: 9}, {At: 0x200, Len: 5}}
	for _, c := range []struct {
		at   uint64
		n    int
		want bool
	}{
		{0xf0, 5, false},  // before them all
		{0xfb, 5, false},  // ends at the first's start
		{0xfc, 5, true},   // its last byte is the first's
		{0x102, 2, true},  // within the first
		{0x104, 5, true},  // across two adjacent
		{0x10d, 5, true},  // the second's last byte
		{0x10e, 5, false}, // begins at the second's end
		{0x150, 5, false}, // between
		{0x1fe, 5, true},  // reaches into the third
		{0x205, 5, false}, // past them all
	} {
		if got := inSpans(spans, c.at, c.n); got != c.want {
			t.Errorf("%d bytes at %#x: %v, want %v", c.n, c.at, got, c.want)
		}
	}
	if inSpans(nil, 0x100, 5) {
		t.Error("no spans: inside")
	}
}
