package session

import (
	"regexp"
	"testing"

	"github.com/profile-dev/profile/detail"
	"github.com/profile-dev/profile/model"
)

// BenchmarkCalls feeds a session the calls of workload (a)'s loop
// (run → rec(10) → … → rec(1) → leaf, leaf), as the inline probes' drain
// does, plain and with rec and leaf selected for detail but none kept
// (--slow 1h): the tracer's share of a call, and of --detail, with the
// arguments at every entry (trap probes) and gated by the inline stubs
// (none sent: the detail thread follows nothing). ns/op is per call.
func BenchmarkCalls(b *testing.B) {
	for _, mode := range []string{"plain", "detail", "gated"} {
		b.Run(mode, func(b *testing.B) {
			var now int64
			s := testSession(&now)
			if mode != "plain" {
				s.SetDetail(regexp.MustCompile("^(rec|leaf)$"), &detail.Rule{SlowNs: 3600e9, Limit: 1000, Gated: mode == "gated"})
			}
			p := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/prog"}, nil, model.None, nil)
			th := s.NewThread(pid, p, nil, model.None, "prog")
			run, rec, leaf := fn(s, "run"), fn(s, "rec"), fn(s, "leaf")
			const top = stackHi - 0x100
			s.Enter(th, run, model.KindDirect, top, 0x1000, now)
			b.ResetTimer()
			for i := 0; i < b.N; i += 12 {
				sp := uint64(top - 0x20)
				for d := 0; d < 10; d++ {
					now++
					s.Enter(th, rec, model.KindDirect, sp, 0x2000, now)
					sp -= 0x20
				}
				now++
				s.Enter(th, leaf, model.KindDirect, sp, 0x3000, now)
				now++
				s.Return(th, sp+8, 3, now)
				for d := 0; d < 10; d++ {
					sp += 0x20
					now++
					s.Return(th, sp+8, 1, now)
				}
				now++
				s.Enter(th, leaf, model.KindDirect, sp, 0x3000, now)
				now++
				s.Return(th, sp+8, 3, now)
			}
		})
	}
}
