package attach

import (
	"testing"

	"github.com/profile-dev/profile/attach/internal/stubasm"
	"github.com/profile-dev/profile/detail"
)

// The stubs' assembly and the engine agree on every offset and constant
// they share: each `.set` of an assembly source and each label the engine
// addresses is listed here with the Go constant that mirrors it, read from
// the object `as` builds. A `.set` that is neither mirrored nor named as
// the assembly's own fails too: a new constant is given its Go side, or
// said to need none.
func TestStubLayoutMatchesGo(t *testing.T) {
	for _, tc := range []struct {
		src string
		// go mirrors the assembly's names (`.set` or label) in Go.
		goSide map[string]uint64
		// asmOnly are the `.set`s no Go code needs (stack frame slots).
		asmOnly []string
	}{
		{"inlinecode/probe.S", map[string]uint64{
			"D_RETSTUB": dRetstub, "D_DROPPING": dDropping, "D_STALL_LIMIT": dStallLimit,
			"D_UNREGISTERED": dUnregistered, "D_SHADOW_FULL": dShadowFull, "D_LOST": dLost,
			"D_SLOW_TICKS": dSlowTicks, "D_DEFER": dDefer, "D_COND_AT": dCondAt,
			"D_COND_TYPE": dCondType, "D_COND_MASK": dCondMask, "D_COND_VALUE": dCondValue,
			"COND_RET": condRet, "D_TABLE": dTable, "TABLE_MASK": tableSize - 1,
			"T_RING": tRing, "T_DEPTH": tDepth, "T_STACK_LO": tStackLo, "T_STACK_HI": tStackHi,
			"T_CAP": tCap, "T_CTX": tCtx, "T_SIDE": tSide, "T_SHADOW": tShadow,
			"R_HEAD": rHead, "R_TAIL": rTail, "R_DROPPED": rDropped, "R_STALL_TICKS": rStallTicks,
			"R_STALLS": rStalls, "R_SKIPPED": rSkipped, "R_BEAT": rBeat, "R_EVENTS": rEvents,
			"RING_MASK": ringEvents - 1,
			"F_RESTORE": flagRestore, "F_DETAIL": flagDetail, "F_ARGS3": flagArgs3,
			"F_CTX": flagCtx, "F_CTXOPEN": flagCtxOpen, "CTX_MARK": ctxMark, "DETAIL_MARK": 55,
			"STALL_WORD": stallID << 32, "ARGS_WORD": argsID << 32, "ARGS_FOR": argsForID,
			"entry": stubEntry, "retstub": stubRet, "data_ptr": stubDataPtr,
			"E_R9": eR9, "E_R8": eR8, "E_RDI": eRDI, "E_RSI": eRSI, "E_RDX": eRDX, "E_RCX": eRCX,
			"COND_I32": detail.TypeI32, "COND_U32": detail.TypeU32, "COND_I64": detail.TypeI64, "COND_U64": detail.TypeU64,
			"CTX_SHIFT": ctxShift, "CTX_MAX": ctxMax,
		}, []string{"RING_ROOM", "E_ID", "E_S", "R_S", "R_RAX"}},
	} {
		t.Run(tc.src, func(t *testing.T) { stubasm.Layout(t, tc.src, tc.goSide, tc.asmOnly) })
	}
}
