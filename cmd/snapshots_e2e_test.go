package cmd_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/profile-dev/profile/model"
)

// workCalls reads a profile file (ReadFile validates it) and returns the
// calls of work and checkpoint (testdata/src/checkpoints.c).
func workCalls(t *testing.T, path string) (work, checkpoint int64) {
	t.Helper()
	p, err := model.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := functionCalls(p)
	return c["work"], c["checkpoint"]
}

// record --checkpoint writes FILE.1, FILE.2, ... as the function returns,
// each a valid profile up to that return, and the final profile after.
func TestRecordCheckpointWritesSnapshots(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := run(t, dir, "record", "--checkpoint", "checkpoint", "-o", "c.data", "--", wl(t, "checkpoints"), "3", "100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for k := int64(1); k <= 4; k++ {
		name, want := fmt.Sprintf("c.data.%d", k), [2]int64{100 * k, k}
		if k == 4 {
			name, want = "c.data", [2]int64{350, 3}
		}
		if w, c := workCalls(t, filepath.Join(dir, name)); w != want[0] || c != want[1] {
			t.Errorf("%s: work %d, checkpoint %d; want %d, %d", name, w, c, want[0], want[1])
		}
		if k <= 3 && !strings.Contains(stderr, "profile: snapshot "+name+" ") {
			t.Errorf("stderr does not name %s: %q", name, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "c.data.4")); err == nil {
		t.Error("a fourth snapshot: checkpoint returned three times")
	}
	// A function that is not there is said, not silently ignored.
	_, stderr, code = run(t, dir, "record", "--checkpoint", "no_such_function", "-o", "n.data", "--", wl(t, "checkpoints"), "1", "10")
	if code != 0 || !strings.Contains(stderr, "--checkpoint no_such_function: no traced function of that name returned") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// SIGUSR1 to the profiler writes a snapshot, and tracing goes on.
func TestSigusr1WritesASnapshot(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(profileBin, "record", "-o", "u.data", "--", wl(t, "checkpoints"), "2", "100")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "phase 1: work 100" {
		t.Fatalf("first line %q", lines.Text())
	}
	// Phase 2 comes 1.1 s after phase 1: the snapshot falls in between.
	cmd.Process.Signal(syscall.SIGUSR1)
	for lines.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if w, c := workCalls(t, filepath.Join(dir, "u.data.1")); w != 100 || c != 1 {
		t.Errorf("snapshot: work %d, checkpoint %d; want 100, 1 (stderr %q)", w, c, stderr.String())
	}
	if w, c := workCalls(t, filepath.Join(dir, "u.data")); w != 250 || c != 2 {
		t.Errorf("final: work %d, checkpoint %d; want 250, 2", w, c)
	}
}

// --snapshot-every writes snapshots on time; counts never decrease.
func TestSnapshotEvery(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := run(t, dir, "record", "--snapshot-every", "400ms", "-o", "e.data", "--", wl(t, "checkpoints"), "3", "100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var last int64
	k := 1
	for ; ; k++ {
		name := filepath.Join(dir, fmt.Sprintf("e.data.%d", k))
		if _, err := os.Stat(name); err != nil {
			break
		}
		w, _ := workCalls(t, name)
		if w < last {
			t.Errorf("snapshot %d: work %d, fewer than %d before", k, w, last)
		}
		last = w
	}
	// 2.2 s of tracing at one snapshot every 0.4 s
	if k-1 < 3 {
		t.Errorf("%d snapshots, want at least 3 (stderr %q)", k-1, stderr)
	}
	if w, _ := workCalls(t, filepath.Join(dir, "e.data")); w != 350 || w < last {
		t.Errorf("final: work %d, want 350", w)
	}
	_, stderr, code = run(t, dir, "record", "--snapshot-every", "-1s", "--", wl(t, "checkpoints"))
	oneLineError(t, stderr, code, "--snapshot-every must be positive")
}
