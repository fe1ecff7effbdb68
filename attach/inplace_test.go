package attach

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/profile-dev/profile/internal/workload"
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
			bin, err := workload.Path("inplace")
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "60")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			lines := make(chan string, 8)
			go func() {
				defer close(lines)
				for s := bufio.NewScanner(stdout); s.Scan(); {
					lines <- s.Text()
				}
			}()
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
