package attach

import (
	"encoding/binary"
	"strconv"
	"testing"
	"time"

	"github.com/profile-dev/profile/attach/internal/lifeline"
	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/instrument"
)

// A profiler SIGKILLed while its target's threads make calls: as the
// tracer's thread exits, the kernel marks the lifeline word in the target's
// rings, and the first stub to find its ring full stops waiting at once —
// the data block's DDropping is 2, the mark's value, where the stall limit
// (2 s without a beat of the tracer, each thread waiting them out) sets 1.
// The target runs on and prints what an untraced run prints.
func TestKilledProfilersStubsStopAtOnce(t *testing.T) {
	for _, kind := range inlineKinds {
		t.Run(kind, func(t *testing.T) {
			args := []string{"--threads", "4", "--seconds", "4"}
			ref, refOut := startLongrun(t, args...)
			target, out := startLongrun(t, args...)
			pid := target.Process.Pid
			tracer := startTracer(t, pid, nil, "PROFILE_TEST_TRACE_PID="+strconv.Itoa(pid), "PROFILE_TEST_PROBES="+kind)
			var rings, data uint64
			var word uint32
			// In: the rings mapped, the word tied, events in a ring.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if rings, data = inlineBlocks(t, pid); rings != 0 && data != 0 {
					word = uint32(readWord(t, pid, rings+stub.Lifeline+lifeline.WordOffset))
					if word != 0 && ringEvents(t, pid, rings) > 0 {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("no events in 10 s (rings %#x, lifeline word %#x)", rings, word)
				}
			}
			if word == lifeline.OwnerDied {
				t.Fatal("lifeline word marked before the kill")
			}
			tracer.Process.Kill()
			tracer.Wait()
			var dropping uint64
			for deadline := time.Now().Add(10 * time.Second); dropping == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				dropping = readWord(t, pid, data+stub.DDropping)
			}
			if dropping != 2 {
				t.Errorf("dropping %d after the kill, want 2 (the lifeline's mark)", dropping)
			}
			if w := uint32(readWord(t, pid, rings+stub.Lifeline+lifeline.WordOffset)); w != lifeline.OwnerDied {
				t.Errorf("lifeline word %#x after the kill, want %#x", w, lifeline.OwnerDied)
			}
			if err := target.Wait(); err != nil {
				t.Fatalf("target: %v", err)
			}
			ref.Wait()
			if got, want := checksum(t, out.String()), checksum(t, refOut.String()); got != want {
				t.Fatalf("checksum %s, untraced %s", got, want)
			}
		})
	}
}

// inlineBlocks finds the rings and the data block in pid's mappings (0
// for one not there yet).
func inlineBlocks(t *testing.T, pid int) (rings, data uint64) {
	t.Helper()
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		t.Fatal(err)
	}
	name := make([]byte, len(stub.RingsName))
	for _, m := range maps {
		switch {
		case m.Path == ringsMapping:
			rings = m.Start
		case m.Path == "" && m.End-m.Start >= stub.DataSize && ptrace.ReadMem(pid, m.Start+stub.DName, name) == nil && string(name) == stub.RingsName:
			data = m.Start
		}
	}
	return rings, data
}

// ringEvents is the events written to the rings of pid's first threads.
func ringEvents(t *testing.T, pid int, rings uint64) uint64 {
	var n uint64
	for slot := uint64(0); slot < 8; slot++ {
		n += readWord(t, pid, rings+slot*stub.RingStride+stub.RHead)
	}
	return n
}

// readWord reads the 8 bytes at at in pid (a 4-byte word is their low
// half: little-endian).
func readWord(t *testing.T, pid int, at uint64) uint64 {
	t.Helper()
	var b [8]byte
	if err := ptrace.ReadMem(pid, at, b[:]); err != nil {
		t.Fatalf("read %#x of %d: %v", at, pid, err)
	}
	return binary.LittleEndian.Uint64(b[:])
}
