package session

import (
	"testing"

	"github.com/profile-dev/profile/model"
)

// RetAt finds the innermost open frame entered at a stack pointer; a
// tail call's callee, entered on the same slot, closes it.
func TestRetAt(t *testing.T) {
	var now int64
	s := testSession(&now)
	p := s.NewProcess(ProcessInfo{Pid: pid, Exe: "/bin/prog"}, nil, model.None, nil)
	th := s.NewThread(pid, p, nil, model.None, "prog")
	s.Enter(th, fn(s, "main"), model.KindDirect, a, 0x11, 0)
	s.Enter(th, fn(s, "forward"), model.KindDirect, b, 0x22, 10)
	for _, c := range []struct {
		sp      uint64
		ret     uint64
		ok      bool
		comment string
	}{
		{a, 0x11, true, "the outer frame"},
		{b, 0x22, true, "the innermost"},
		{c, 0, false, "no frame there"},
	} {
		if ret, ok := s.RetAt(th, c.sp); ret != c.ret || ok != c.ok {
			t.Errorf("%s: RetAt(%#x) = %#x, %v; want %#x, %v", c.comment, c.sp, ret, ok, c.ret, c.ok)
		}
	}
	s.Enter(th, fn(s, "work"), model.KindUnknown, b, 0x99, 20) // forward's tail call
	if ret, ok := s.RetAt(th, b); ret != 0x99 || !ok {
		t.Errorf("after the tail call: RetAt = %#x, %v; want the callee's 0x99", ret, ok)
	}
}
