package instrument

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
)

// ntGNUBuildID is the note type of the GNU build ID.
const ntGNUBuildID = 3

// buildID returns the hex NT_GNU_BUILD_ID of f, or "" when it has none or the
// notes are malformed: a missing build ID only weakens cache matching, so it
// is not worth failing Open for.
func buildID(f *elf.File) string {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id, ok := findBuildID(data); ok {
			return id
		}
	}
	return ""
}

// findBuildID walks ELF notes (namesz, descsz, type, name, desc; name and
// desc padded to 4 bytes).
func findBuildID(data []byte) (string, bool) {
	align := func(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }
	for len(data) >= 12 {
		namesz := binary.LittleEndian.Uint32(data)
		descsz := binary.LittleEndian.Uint32(data[4:])
		typ := binary.LittleEndian.Uint32(data[8:])
		data = data[12:]
		nameEnd := align(namesz)
		descEnd := nameEnd + align(descsz)
		if descEnd > uint64(len(data)) || nameEnd+uint64(descsz) > uint64(len(data)) {
			return "", false
		}
		if typ == ntGNUBuildID && namesz == 4 && string(data[:4]) == "GNU\x00" {
			return hex.EncodeToString(data[nameEnd : nameEnd+uint64(descsz)]), true
		}
		data = data[descEnd:]
	}
	return "", false
}
