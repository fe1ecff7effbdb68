package attach

import (
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/instrument"
)

// inplace's wrap (sub rsp,8; call leaf) keeps its call in place under an
// inline probe; a SIGSEGV stops its thread as it goes there, and the
// handler waits until the profiler detached, so that its signal frame
// resumes at the call the detach took away: the detach must move that
// frame's pc to the original call (the program then prints where it
// resumes, and ends as it would untraced).
func TestDetachUnderASignalFrameAtAnInPlaceCall(t *testing.T) {
	forEachKind(t, inlineKinds, func(t *testing.T, opt Options) {
		r := detachOnFault(t, opt, []string{"60"}, "inplace: faulted", "inplace: fault at +6, resumes at +4", "inplace: done")
		if r.Stats.Probes.Inline == 0 {
			t.Fatal("no inline probe")
		}
	})
}

// The same handler, the thread interrupted as it entered wrap's
// trampoline (only wrap traced: the handler's own probe would fault on
// that page too): the detach leaves our code mapped for it, and the
// trampoline it resumes in must lead to the original call, wrap's bytes
// being back, not into the middle of it.
func TestDetachUnderASignalFrameInATrampoline(t *testing.T) {
	forEachKind(t, inlineKinds, func(t *testing.T, opt Options) {
		f, err := instrument.NewFilter([]string{`^inplace:wrap$`}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		opt.Filter = f
		r := detachOnFault(t, opt, []string{"60", "tramp"}, "inplace: faulted in the trampoline",
			"inplace: through the trampoline", "inplace: done")
		if r.Stats.StackRefs == 0 {
			t.Errorf("the detach saw no frame in its code")
		}
	})
}

// detachOnFault traces inplace (args) until it says fault (its handler
// then waits for the detach), detaches, and checks that it then says
// rest and ends well.
func detachOnFault(t *testing.T, opt Options, args []string, fault string, rest ...string) *Result {
	t.Helper()
	cmd, lines := startSaying(t, "inplace", args...)
	stop := attachRunning(t, cmd.Process.Pid, opt)
	select {
	case l := <-lines:
		if l != fault {
			stop()
			t.Fatalf("target said %q before it faulted", l)
		}
	case <-time.After(30 * time.Second):
		stop()
		t.Fatal("no fault within 30 s of tracing")
	}
	r, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	said := lastLines(t, cmd, lines, len(rest))
	if got, want := strings.Join(said, "\n"), strings.Join(rest, "\n"); got != want {
		t.Errorf("target said %q, want %q", got, want)
	}
	return r
}
