package cmd

import (
	"bytes"
	"testing"

	"github.com/profile-dev/profile/attach"
)

// TestWriteProbeCode: --stats splits the samples in the probes' code by
// part, most first, and lists the stub code's hottest offsets with the
// part each lies in and its instruction (probe.S's: the return stub
// begins `sub rsp, 8; push rax`, the entry stub `push rax; push rcx`);
// nothing without such samples; the samples behind the exit stubs'
// clock reads, given to the program, counted apart.
func TestWriteProbeCode(t *testing.T) {
	cases := []struct {
		name string
		c    attach.ProbeCodeStats
		n    int64
		want string
	}{
		{"none", attach.ProbeCodeStats{}, 0, ""},
		{"stubs and trampolines", attach.ProbeCodeStats{
			Parts:       map[string]int64{"return stub": 6, "entry stub": 3, "trampolines": 1},
			StubOffsets: map[int]int64{0xd0a: 5, 0xd0e: 1, 0x1: 3},
		}, 10, "  probes' code:      return stub 60.0%, entry stub 30.0%, trampolines 10.0%\n" +
			"  hottest in stubs:  +0xd0a 50.0% (return stub: sub rsp, 0x8), +0x1 30.0% (entry stub: push rcx), +0xd0e 10.0% (return stub: push rax)\n"},
		{"no stub", attach.ProbeCodeStats{Parts: map[string]int64{"fast paths": 2}}, 2,
			"  probes' code:      fast paths 100.0%\n"},
		{"in waiting calls", attach.ProbeCodeStats{Parts: map[string]int64{"exit stub": 4}, StubOffsets: map[int]int64{0x13fb: 4}, InWaiting: 3}, 4,
			"  probes' code:      exit stub 100.0%\n" +
				"  in waiting calls:  75.0% (a waiting call innermost: its entry's end and its return, first after its system call)\n" +
				"  hottest in stubs:  +0x13fb 100.0% (exit stub: push rax)\n"},
		{"behind exit clocks only", attach.ProbeCodeStats{BehindExitClock: 7}, 0,
			"  behind exit clocks: 7 (the program's, given to the callers: a clock read waits for the returning code's work)\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		writeProbeCode(&b, c.c, c.n)
		if b.String() != c.want {
			t.Errorf("%s: wrote\n%q\nwant\n%q", c.name, b.String(), c.want)
		}
	}
}
