package attach

import (
	"testing"
	"time"

	"github.com/profile-dev/profile/attach/internal/inline"
	"github.com/profile-dev/profile/attach/internal/stub"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/session"
)

// TestProbeSamplePlaced: a sample in the probes' own code is their cost,
// given to no context, wherever the return it was taken in goes: the
// return into the return stub is predicted (docs/design.md, Stubs), and
// what the kernel's return from a system call holds lands in the wrapper.
// A sample in the program's code behind the return is the caller's. The
// events go as inlineEvent takes them: flushBefore, then the session's
// Return.
func TestProbeSamplePlaced(t *testing.T) {
	const period = 250 * time.Microsecond
	cases := []struct {
		name     string
		callee   string // "write" (the C library's) or "leaf" (the program's)
		waited   bool   // the callee called write, which returned, before the sample
		inProbes bool   // the sample is in the probes' code, else in the caller's
		caller   int64  // the caller's sampled ns after the return
		probes   int64
	}{
		{"waiting call's return", "write", false, true, 0, 1},
		{"program function's return", "leaf", false, true, 0, 1},
		{"return of a frame open while a waiting call returned", "leaf", true, true, 0, 1},
		{"the caller's code after a waiting call's return", "write", false, false, int64(period), 0},
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
				s.Return(st, sp, 0, now)
			}
			s.Enter(st, caller, model.KindDirect, 0x1000, 0x400000, 100)
			s.Enter(st, callee, model.KindDirect, 0xff0, 0x400100, 200)
			if c.waited {
				s.Enter(st, write, model.KindPLT, 0xfe0, 0x400200, 210)
				exit(0xfe8, 220)
			}
			x := pendingSample{ns: 300, fn: model.None, owner: model.None, inProbes: true}
			if !c.inProbes {
				x = pendingSample{ns: 450, fn: caller, owner: caller}
			}
			th.smp.pending = []pendingSample{x}
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
			if got != c.caller || e.cpu.InProbes != c.probes || len(th.smp.pending) != 0 {
				t.Errorf("caller sampled %d ns, %d in the probes, %d pending; want %d, %d, 0",
					got, e.cpu.InProbes, len(th.smp.pending), c.caller, c.probes)
			}
		})
	}
}
