package inline

import (
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
