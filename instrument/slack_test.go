package instrument

import (
	"debug/elf"
	"fmt"
	"os"
	"testing"
)

func TestSlackOfSegments(t *testing.T) {
	x := elf.PF_R | elf.PF_X
	for _, c := range []struct {
		name  string
		loads []segment
		n     uint64
		want  []uint64
	}{
		{"tail of the text page", []segment{{vaddr: 0x1000, memsz: 0x1234, filesz: 0x1234, flags: x}}, 41, []uint64{0x2240}},
		{"too little room", []segment{{vaddr: 0x1000, memsz: 0xfe0, filesz: 0xfe0, flags: x}}, 41, nil},
		{"exactly enough", []segment{{vaddr: 0x1000, memsz: 0xfd0, filesz: 0xfd0, flags: x}}, 48, []uint64{0x1fd0}},
		{"ends on a page boundary", []segment{{vaddr: 0x1000, memsz: 0x1000, filesz: 0x1000, flags: x}}, 1, nil},
		{"not executable", []segment{{vaddr: 0x1000, memsz: 0x100, filesz: 0x100, flags: elf.PF_R}}, 41, nil},
		{"zero-filled tail", []segment{{vaddr: 0x1000, memsz: 0x200, filesz: 0x100, flags: x}}, 41, nil},
		{"page shared with data", []segment{
			{vaddr: 0x1000, memsz: 0x100, filesz: 0x100, flags: x},
			{vaddr: 0x1800, memsz: 0x100, filesz: 0x100, flags: elf.PF_R | elf.PF_W},
		}, 41, nil},
		{"data on the next page", []segment{
			{vaddr: 0x1000, memsz: 0x100, filesz: 0x100, flags: x},
			{vaddr: 0x2000, memsz: 0x100, filesz: 0x100, flags: elf.PF_R | elf.PF_W},
		}, 41, []uint64{0x1100}},
	} {
		m := &Module{loads: c.loads}
		if got := m.slack(c.n); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: slack = %#x, want %#x", c.name, got, c.want)
		}
	}
}

// TestSlackInThisProcess: the slack Slack finds in this test binary is in
// an executable mapping and past every segment.
func TestSlackInThisProcess(t *testing.T) {
	maps, err := ReadMaps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m, err := openLayout(exe)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.slack(41)) == 0 {
		t.Skip("this binary's text has no 41 bytes of slack")
	}
	addr, ok := Slack(maps, []string{"/nonexistent", exe}, 41)
	if !ok {
		t.Fatal("no slack found")
	}
	bias, err := m.Bias(maps)
	if err != nil {
		t.Fatal(err)
	}
	if !m.mappedExec(maps, addr, 41) {
		t.Fatalf("%#x is not in an executable mapping of %s", addr, exe)
	}
	for _, s := range m.loads {
		if addr-bias >= s.vaddr && addr-bias < s.vaddr+s.memsz {
			t.Fatalf("%#x is inside a segment (%#x+%#x)", addr, s.vaddr, s.memsz)
		}
	}
}
