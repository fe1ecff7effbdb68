package attach

import (
	"testing"
	"time"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/session"
)

// TestReturningSamplePlaced: a sample stamped in a return stub's first
// instructions (returning) goes to the caller's frame when the return
// would cost the caller time untraced: a waiting call's (the kernel's
// return from its system call), or that of a frame open while one
// returned (a mispredicted return). Otherwise it is the probes' cost, as
// any other sample in their code. The events go as inlineEvent takes
// them: flushBefore, then the session's Return and returned; an entry
// is followed by entered.
func TestReturningSamplePlaced(t *testing.T) {
	const period = 250 * time.Microsecond
	cases := []struct {
		name      string
		callee    string // "write" (the C library's) or "leaf" (the program's)
		waited    bool   // the callee called write, which returned, before the sample
		replaced  bool   // ... then the callee's frame was closed by an entry at its slot (a tail call), whose frame returns
		returning bool
		caller    int64 // the caller's sampled ns after the return
		inProbes  int64
	}{
		{"waiting call's return", "write", false, false, true, int64(period), 0},
		{"program function's return", "leaf", false, false, true, 0, 1},
		{"return of a frame open while a waiting call returned", "leaf", true, false, true, int64(period), 0},
		{"return of a frame opened after a waiting call returned", "leaf", true, true, true, 0, 1},
		{"elsewhere in the probes", "write", false, false, false, 0, 1},
		{"elsewhere in the probes, after a waiting call", "leaf", true, false, false, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := session.New(model.Meta{Exe: "/bin/prog"})
			in := s.Interner()
			exe, libc := in.Module("/bin/prog", ""), in.Module("/lib/libc.so.6", "")
			caller, write := in.Func(exe, "caller"), in.Func(libc, "write")
			callee := in.Func(exe, "leaf")
			if c.callee == "write" {
				callee = write
			}
			p := s.NewProcess(session.ProcessInfo{Pid: 1, Exe: "/bin/prog"}, nil, model.None, nil)
			st := s.NewThread(1, p, nil, model.None, "t")
			e := &engine{s: s}
			e.opt.SamplePeriod = period
			th := &thread{tid: 1, st: st, smp: &threadSamples{}}
			exit := func(sp uint64, now int64) {
				e.flushBefore(th, now, &inline.Event{ID: stub.ExitID})
				top, _ := s.Top(st)
				s.Return(st, sp, 0, now)
				e.returned(th, top)
			}
			s.Enter(st, caller, model.KindDirect, 0x1000, 0x400000, 100)
			e.entered(th)
			s.Enter(st, callee, model.KindDirect, 0xff0, 0x400100, 200)
			e.entered(th)
			if c.waited {
				s.Enter(st, write, model.KindPLT, 0xfe0, 0x400200, 210)
				e.entered(th)
				exit(0xfe8, 220)
			}
			if c.replaced {
				s.Enter(st, callee, model.KindDirect, 0xff0, 0x400100, 230)
				e.entered(th)
			}
			th.smp.pending = []pendingSample{{ns: 300, fn: model.None, owner: model.None, inProbes: true, returning: c.returning}}
			exit(0xff8, 400)
			e.flushBefore(th, 500, &inline.Event{ID: uint32(callee)})
			prof := s.Snapshot(600, session.Counters{})
			var got int64
			for _, n := range prof.Threads[0].Nodes {
				if n.Func == caller {
					got += n.SampledNs
				} else if n.SampledNs != 0 {
					t.Errorf("%s: sampled %d ns, want none", prof.FuncName(n.Func), n.SampledNs)
				}
			}
			if got != c.caller || e.cpu.InProbes != c.inProbes || len(th.smp.pending) != 0 {
				t.Errorf("caller sampled %d ns, %d in the probes, %d pending; want %d, %d, 0",
					got, e.cpu.InProbes, len(th.smp.pending), c.caller, c.inProbes)
			}
		})
	}
}

// TestReturningAt: only an instruction in a return stub's register saves
// is the return's.
func TestReturningAt(t *testing.T) {
	const base, stubAt = 0x7000_0000, 0x7000_0040
	as := &space{areas: []*area{{base: base, size: 1 << 20}}, inl: &inlineSpace{Stubs: map[uint64]uint64{base: stubAt}}}
	ret := uint64(stubAt + stub.RetStub)
	cases := []struct {
		name string
		ip   uint64
		want bool
	}{
		{"first instruction", ret, true},
		{"last save", stubAt + stub.RetSaved, true},
		{"first read", stubAt + stub.RetSaved + 7, false},
		{"before the stub", ret - 1, false},
		{"entry stub", stubAt + stub.Entry, false},
		{"outside every area", 0x400000, false},
	}
	for _, c := range cases {
		if got := returningAt(as, c.ip); got != c.want {
			t.Errorf("%s: returning %v, want %v", c.name, got, c.want)
		}
	}
}
