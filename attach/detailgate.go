package attach

import (
	"encoding/binary"

	"github.com/profile-dev/profile/attach/internal/ptrace"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/detail"
)

// detailGate is how the inline stubs gate a selected call's arguments
// (the data block's D_DEFER, D_SLOW_TICKS and D_COND_*). With a rule a
// call must meet to be kept (--slow, --detail-if), they keep its
// arguments beside its shadow entry and send them only for a call that
// meets it when it ends: a call not kept costs the ring two events, as
// any traced call. The stubs judge as the tracer does (detail.Cond's
// reading of a register), so a call the tracer keeps never lacks its
// arguments; --slow is judged in ticks 2% short of it, for the same
// reason. A rule that keeps every call sends them at each entry.
type detailGate struct {
	deferred  bool
	slowTicks uint64
	condAt    uint64 // stub.DCondAt
	condType  uint64
	condMask  uint64
	condValue uint64
}

// argsGated tells whether the stubs gate the arguments under opt's
// rule: whether it can leave a selected call out.
func argsGated(opt Options) bool {
	return opt.Detail.Funcs != nil && (opt.Detail.Rule.SlowNs > 0 || opt.Detail.Rule.If != nil)
}

func (e *engine) detailGate() detailGate {
	r := e.opt.Detail.Rule
	if !argsGated(e.opt) {
		return detailGate{}
	}
	g := detailGate{deferred: true}
	if r.SlowNs > 0 {
		g.slowTicks = max(1, uint64(float64(r.SlowNs)/e.clock.NsPerTick()*0.98))
	}
	if c := r.If; c != nil {
		g.condAt = stub.CondRet
		if !c.OnReturn() {
			g.condAt = [6]uint64{stub.ERDI, stub.ERSI, stub.ERDX, stub.ERCX, stub.ER8, stub.ER9}[c.Reg]
		}
		g.condType = uint64(c.TypeCode())
		g.condMask = uint64(c.Outcomes())
		g.condValue = uint64(c.Value)
		if g.condType == detail.TypeU64 {
			// u64: HOLDS flips the register's top bit too, and compares
			// signed.
			g.condValue ^= 1 << 63
		}
	}
	return g
}

// put writes g into the data block's header.
func (g detailGate) put(hdr []byte) {
	if !g.deferred {
		return
	}
	binary.LittleEndian.PutUint64(hdr[stub.DDefer:], 1)
	binary.LittleEndian.PutUint64(hdr[stub.DSlowTicks:], g.slowTicks)
	binary.LittleEndian.PutUint64(hdr[stub.DCondAt:], g.condAt)
	binary.LittleEndian.PutUint64(hdr[stub.DCondType:], g.condType)
	binary.LittleEndian.PutUint64(hdr[stub.DCondMask:], g.condMask)
	binary.LittleEndian.PutUint64(hdr[stub.DCondValue:], g.condValue)
}

// openFrameArgs gives the session the arguments of t's frames still open
// at a detach whose side records hold them, as an unwinder's restore does
// (args_now in probe.S): a selected call still running then is judged as
// the trap probes judge it, on its time so far and its arguments, not
// left out for having sent none. A condition on the return value cannot
// hold for a call that has not returned: none are sent then.
func (e *engine) openFrameArgs(t *thread, is *inlineSpace) {
	slot, ok := is.TidSlot[t.tid]
	if !ok || !argsGated(e.opt) || e.opt.Detail.Rule.If != nil && e.opt.Detail.Rule.If.OnReturn() {
		return
	}
	sh := shadowOf(t.tid, is, slot)
	side := make([]byte, len(sh)/16*stub.SideRecord)
	if sh == nil || ptrace.ReadMem(t.tid, is.Data+stub.DSides+uint64(slot)*stub.SideSize, side) != nil {
		return
	}
	for i := range len(sh) / 16 {
		if binary.LittleEndian.Uint64(sh[i*16+8:])&stub.DetailMark == 0 {
			continue
		}
		rec := side[i*stub.SideRecord:]
		var args [6]uint64
		n := 3 * min(binary.LittleEndian.Uint64(rec[8:]), 2)
		for k := range n {
			args[k] = binary.LittleEndian.Uint64(rec[16+8*k:])
		}
		e.s.ArgsAt(t.st, binary.LittleEndian.Uint64(sh[i*16:]), &args)
	}
}
