package attach

import (
	"strings"
	"testing"
	"time"
)

// inplace's wrap (sub rsp,8; call leaf) keeps its call in place under an
// inline probe; a SIGSEGV stops its thread as it goes there, and the
// handler waits until the profiler detached, so that its signal frame
// resumes at the call the detach took away: the detach must move that
// frame's pc to the original call (the program then prints where it
// resumes, and ends as it would untraced).
func TestDetachUnderASignalFrameAtAnInPlaceCall(t *testing.T) {
	for _, kind := range []string{ProbesInline, probesInlineHijack} {
		t.Run(kind, func(t *testing.T) {
			cmd, lines := startSaying(t, "inplace", "60")
			opt := defaultOptions(t)
			withKind(&opt, kind)
			stop := attachRunning(t, cmd.Process.Pid, opt)
			select {
			case l := <-lines:
				if l != "inplace: faulted" {
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
			if r.Stats.Probes.Inline == 0 {
				t.Fatal("no inline probe")
			}
			var said []string
			for open := true; open; {
				select {
				case l, ok := <-lines:
					if said, open = append(said, l), ok; !ok {
						said = said[:len(said)-1]
					}
				case <-time.After(30 * time.Second):
					cmd.Process.Kill()
					t.Fatalf("target still running 30 s after the detach (said %q)", said)
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("target: %v (said %q)", err, said)
			}
			if got := strings.Join(said, "\n"); got != "inplace: fault at +6, resumes at +4\ninplace: done" {
				t.Errorf("target said %q", got)
			}
		})
	}
}
