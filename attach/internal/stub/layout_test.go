package stub

import (
	"fmt"
	"maps"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/attach/internal/stubasm"
	"github.com/profile-dev/profile/detail"
)

// probe.bin is inlinecode/probe.S built, its data pointer and via pointer
// last (IsCopy compares what comes before).
func TestBlobMatchesSource(t *testing.T) {
	stubasm.Blob(t, "probe.bin", "inlinecode/probe.S", code, stubasm.Objcopy)
	if len(code) != ViaPtr+8 || ViaPtr != DataPtr+8 {
		t.Fatalf("probe.bin is %d bytes, want the data pointer at %#x and the via pointer last at %#x", len(code), DataPtr, ViaPtr)
	}
}

// The stubs' assembly and Go agree on every offset and constant they
// share: each `.set` of probe.S and each label the engine addresses is
// listed with the constant that mirrors it; a `.set` neither mirrored nor
// named as the assembly's own fails too (a new constant is given its Go
// side, or said to need none).
func TestLayoutMatchesAssembly(t *testing.T) {
	stubasm.Layout(t, "inlinecode/probe.S", map[string]uint64{
		"D_RETSTUB": DRetstub, "D_DROPPING": DDropping, "D_STALL_LIMIT": DStallLimit,
		"D_UNREGISTERED": DUnregistered, "D_SHADOW_FULL": DShadowFull, "D_LOST": DLost,
		"D_SLOW_TICKS": DSlowTicks, "D_DEFER": DDefer, "D_COND_AT": DCondAt,
		"D_COND_TYPE": DCondType, "D_COND_MASK": DCondMask, "D_COND_VALUE": DCondValue, "D_LIFELINE": DLifeline, "TAIL_MARK": 63,
		"COND_RET": CondRet, "D_TABLE": DTable, "TABLE_MASK": TableSize - 1,
		"T_RING": TRing, "T_DEPTH": TDepth, "T_STACK_LO": TStackLo, "T_STACK_HI": TStackHi,
		"T_CAP": TCap, "T_CTX": TCtx, "T_SIDE": TSide, "T_STALE": TStale, "T_SHADOW": TShadow,
		"R_HEAD": RHead, "R_TAIL": RTail, "R_DROPPED": RDropped, "R_STALL_TICKS": RStallTicks,
		"R_STALLS": RStalls, "R_SKIPPED": RSkipped,
		"R_COUNTS": RCounts, "COUNT_BITS": CountBits, "COUNT_MASK": CountEntries - 1, "R_BEAT": RBeat, "R_EVENTS": REvents,
		"RING_MASK": RingEvents - 1,
		"F_RESTORE": FlagRestore, "F_DETAIL": FlagDetail, "F_ARGS3": FlagArgs3,
		"F_CTX": FlagCtx, "F_CTXOPEN": FlagCtxOpen, "F_WAIT": FlagWait, "F_EXIT": FlagExit, "CTX_MARK": CtxMark, "DETAIL_MARK": 55, "INFLIGHT_MARK": 54,
		"STALL_WORD": StallID << 32, "ARGS_WORD": ArgsID << 32, "ARGS_FOR": ArgsForID, "COUNTED_ID": CountedID,
		"entry": Entry, "via": Via, "via_call": ViaCall, "retstub": RetStub, "count": Count, "exitsite": ExitSite, "tailsite": TailSite, "data_ptr": DataPtr, "via_ptr": ViaPtr,
		"E_R9": ER9, "E_R8": ER8, "E_RDI": ERDI, "E_RSI": ERSI, "E_RDX": ERDX, "E_RCX": ERCX,
		"COND_I32": detail.TypeI32, "COND_U32": detail.TypeU32, "COND_I64": detail.TypeI64, "COND_U64": detail.TypeU64,
		"CTX_SHIFT": CtxShift, "CTX_MAX": CtxMax,
	}, []string{"RING_ROOM", "E_RET", "E_ID", "E_S", "R_S", "R_RAX", "X_S", "X_RAX", "C_ID", "C_RET", "COUNT_PROBES"})
}

// TestInst: the stub code's instruction at an offset, as probe.S has it;
// none outside the code.
func TestInst(t *testing.T) {
	for _, c := range []struct {
		off  int
		want string
	}{
		{Entry, "push rax"},
		{Entry + 1, "push rcx"},
		{RetStub, "sub rsp, 0x8"},
		{RetStub + 4, "push rax"},
		{-1, ""},
		{DataPtr, ""},
	} {
		if got := Inst(c.off); got != c.want {
			t.Errorf("Inst(%#x) = %q, want %q", c.off, got, c.want)
		}
	}
}

// TestAfterEventClock: the offsets behind the stub code's event clock
// reads are those objdump, a decoder of its own, finds behind each rdtsc
// of probe.bin that the store of an event's tick follows (not the full
// ring's waits); every stub that writes an event has one.
func TestAfterEventClock(t *testing.T) {
	out, err := exec.Command("objdump", "-D", "-M", "intel", "-b", "binary", "-m", "i386:x86-64",
		fmt.Sprintf("--stop-address=%#x", DataPtr), "probe.bin").Output()
	if err != nil {
		t.Skipf("objdump: %v", err)
	}
	type inst struct {
		off  int
		text string
	}
	var insts []inst
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 {
			continue
		}
		off, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(f[0]), ":"), 16, 64)
		if err != nil {
			continue
		}
		insts = append(insts, inst{int(off), strings.Join(strings.Fields(f[2]), " ")})
	}
	want, reads := map[int]bool{}, 0
	for i, in := range insts {
		if in.text != "rdtsc" {
			continue
		}
		reads++
		if i+3 < len(insts) && insts[i+3].text == "mov QWORD PTR [r9+0x8],rax" {
			want[insts[i+1].off] = true
		}
	}
	if len(want) == 0 || len(want) == reads || !maps.Equal(want, eventClocks) {
		t.Fatalf("behind event clock reads: %v, objdump says %v (of %d clock reads)", eventClocks, want, reads)
	}
	for _, s := range []struct {
		name     string
		from, to int
	}{{"entry stub", Entry, Via}, {"return stub", RetStub, Count}, {"exit stub", ExitSite, TailSite}} {
		n := 0
		for off := range eventClocks {
			if off > s.from && off < s.to {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no event clock read in the %s", s.name)
		}
	}
	if AfterEventClock(Entry) || AfterEventClock(-1) {
		t.Errorf("AfterEventClock true where no clock read is")
	}
}
