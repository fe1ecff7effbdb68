package cmd_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// The acceptance of issue #13's --auto-expand: hidden's time hides in
// work's C library callees (snprintf, strtod), which are not traced by
// default. Live, auto-expand takes work, finds them in its code and
// traces them from then on, saying so on stderr; their counts from then
// on are exact. A snapshot taken while the workload waits between
// phases 1 and 2 (after the expansion) splits the run: the final counts
// minus the snapshot's are exactly what phases 2 and 3 logged, and the
// profile says since when each callee was traced. Both probe kinds.
func TestAutoExpandTracesHiddenCallees(t *testing.T) {
	for _, probes := range []string{"inline", "trap"} {
		t.Run(probes, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(profileBin, "record", "--probes", probes, "--auto-expand", "1", "--interval", "200ms",
				"-o", "x.data", "--", wl(t, "hidden"), "3", "2000")
			cmd.Dir = dir
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// Every stderr line; expanded says when work's was seen.
			var errLines []string
			expanded := make(chan string, 1)
			errDone := make(chan struct{})
			workLine := regexp.MustCompile(`^profile: \+\d+\.\d\ds: --auto-expand: work \([^)]* self so far\): tracing (.*) from now on$`)
			go func() {
				defer close(errDone)
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					errLines = append(errLines, sc.Text())
					if m := workLine.FindStringSubmatch(sc.Text()); m != nil {
						expanded <- m[1]
					}
				}
			}()
			out := bufio.NewScanner(stdout)
			var phases []string
			if !out.Scan() {
				t.Fatal("no phase 1 line")
			}
			phases = append(phases, out.Text())
			select {
			case added := <-expanded:
				if !strings.Contains(added, "libc.so.6:snprintf") || !strings.Contains(added, "libc.so.6:strtod") {
					t.Errorf("work's callees traced: %s", added)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("work was not expanded within 60 s")
			}
			// The workload waits for a line before phase 2: snapshot now.
			cmd.Process.Signal(syscall.SIGUSR1)
			snap := filepath.Join(dir, "x.data.1")
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(snap); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no snapshot within 30 s")
				}
			}
			stdin.Close() // phases 2 and 3 at once
			for out.Scan() {
				phases = append(phases, out.Text())
			}
			<-errDone
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(errLines, "\n"))
			}
			if len(phases) != 3 {
				t.Fatalf("phases: %q", phases)
			}
			var after [2]int64 // snprintf, strtod in phases 2 and 3
			for i, line := range phases {
				var p, w, s, d int64
				if _, err := fmt.Sscanf(line, "phase %d: work %d snprintf %d strtod %d", &p, &w, &s, &d); err != nil || p != int64(i+1) {
					t.Fatalf("phase line %q: %v", line, err)
				}
				if i > 0 {
					after[0] += s
					after[1] += d
				}
			}
			if after != [2]int64{4000, 2000} {
				t.Fatalf("the workload logged %v for phases 2 and 3", after)
			}
			first, err := model.ReadFile(snap)
			if err != nil {
				t.Fatal(err)
			}
			final, err := model.ReadFile(filepath.Join(dir, "x.data"))
			if err != nil {
				t.Fatal(err)
			}
			c0, c1 := functionCalls(first), functionCalls(final)
			for i, fn := range []string{"libc.so.6:snprintf", "libc.so.6:strtod"} {
				if got := c1[fn] - c0[fn]; got != after[i] {
					t.Errorf("%s: %d calls after the snapshot, the workload made %d (snapshot %d, final %d)", fn, got, after[i], c0[fn], c1[fn])
				}
				if c0[fn] > 2000 {
					t.Errorf("%s: %d calls in phase 1, which made at most 2000", fn, c0[fn])
				}
				since := tracedSince(final, fn)
				if since <= 0 || since > first.Meta.DurationNs || since != tracedSince(first, fn) {
					t.Errorf("%s traced since %d ns (snapshot %d ns, taken at %d ns)", fn, since, tracedSince(first, fn), first.Meta.DurationNs)
				}
			}
			if c1["work"] != 6000 || tracedSince(final, "work") != 0 {
				t.Errorf("work: %d calls, traced since %d; want 6000 from the start", c1["work"], tracedSince(final, "work"))
			}
			info, stderrInfo, code := run(t, dir, "info", "x.data")
			if code != 0 || !regexp.MustCompile(`(?m)^  \+\d+\.\d\ds +libc\.so\.6:snprintf$`).MatchString(info) {
				t.Errorf("info (exit %d, %s) does not say since when snprintf is traced:\n%s", code, stderrInfo, info)
			}
		})
	}
}

// tracedSince is when fn (as the profile names it) began to be traced.
func tracedSince(p *model.Profile, fn string) int64 {
	for i, f := range p.Functions {
		if p.FuncName(i) == fn {
			return f.TracedSinceNs
		}
	}
	return -1
}
