package proctext

import (
	"debug/elf"
	"os"
	"testing"

	"github.com/profile-dev/profile/instrument"
)

// TestMaskNonCodeKeepsOnlySegmentBytes: a change past the end of a
// segment's file bytes is masked, one inside is kept.
func TestMaskNonCodeKeepsOnlySegmentBytes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	var text *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	f.Close()
	if text == nil || (text.Off+text.Filesz)%4096 == 0 {
		t.Skip("no executable segment ending inside a page")
	}
	start := text.Off &^ 4095
	end := (text.Off + text.Filesz + 4095) &^ 4095
	m := instrument.Mapping{Start: 0x10000, End: 0x10000 + end - start, Offset: start, Path: exe}
	for _, c := range []struct {
		name string
		off  uint64 // file offset changed
		kept bool
	}{
		{"first code byte", text.Off, true},
		{"last code byte", text.Off + text.Filesz - 1, true},
		{"first byte past the segment", text.Off + text.Filesz, false},
		{"last byte of the page", end - 1, false},
	} {
		want := make([]byte, end-start)
		got := make([]byte, len(want))
		got[c.off-start] = 0xcc
		maskNonCode(m, got, want)
		if kept := got[c.off-start] == 0xcc; kept != c.kept {
			t.Errorf("%s (offset %#x): kept %v, want %v", c.name, c.off, kept, c.kept)
		}
	}
}
