package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// -o - writes the profile to standard output, and nothing else goes
// there; -o /dev/null takes it and stays a device.
func TestProfileToStdout(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTemp(t, dir, "a.data", modeltest.Sample())
	writeTemp(t, dir, "b.data", modeltest.Sample())
	if _, stderr, code := runRoot("export", "a.data", "--format", "pprof", "-o", "a.pb.gz"); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	for _, c := range []struct {
		args    []string
		threads int // of the profile written
		said    string
	}{
		{[]string{"merge", "a.data", "b.data", "-o", "-"}, 3, "profile: wrote the standard output (2 runs, "},
		{[]string{"prune", "a.data", "--threshold", "0", "-o", "-"}, 4, "profile: wrote the standard output ("},
		{[]string{"import", "a.pb.gz", "-o", "-"}, 4, "profile: wrote the standard output ("},
	} {
		stdout, stderr, code := runRoot(c.args...)
		if code != 0 || !strings.HasPrefix(stderr, c.said) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 0 and one line %q...", c.args, code, stderr, c.said)
			continue
		}
		p, err := model.Read(strings.NewReader(stdout))
		if err != nil {
			t.Errorf("%v: standard output is no profile: %v", c.args, err)
		} else if len(p.Threads) != c.threads {
			t.Errorf("%v: %d threads, want %d", c.args, len(p.Threads), c.threads)
		}
		if _, err := os.Stat("-"); err == nil {
			t.Fatalf("%v wrote a file named -", c.args)
		}
	}
	for _, args := range [][]string{
		{"merge", "a.data", "b.data", "-o", "/dev/null"},
		{"prune", "a.data", "-o", "/dev/null"},
		{"export", "a.data", "--format", "folded", "-o", "/dev/null"},
		{"render", "a.data", "--svg", "-o", "/dev/null"},
	} {
		stdout, stderr, code := runRoot(args...)
		if code != 0 || stdout != "" || !strings.HasPrefix(stderr, "profile: wrote /dev/null") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q", args, code, len(stdout), stderr)
		}
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v %v", fi.Mode(), err)
	}
	if _, err := os.Stat("/dev/null.old"); err == nil {
		t.Error("a /dev/null.old was made")
	}
}

// What cannot work is refused before any work, with a usage error
// saying why.
func TestOutputRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTemp(t, dir, "a.data", modeltest.Sample())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "-o", "-", "--", "/bin/true"},
			"profile: -o -: the traced program writes to the standard output (it inherits it): give -o FILE\n"},
		{[]string{"top", "--pid", "1", "-o", "-"}, "profile: -o -: top shows its view on the standard output: give -o FILE\n"},
		{[]string{"attach", "--pid", "1", "-o", "-", "--snapshot-every", "1s"},
			"profile: --checkpoint and --snapshot-every write FILE.1, FILE.2, ... beside -o FILE: give -o FILE, not -o -\n"},
		{[]string{"record", "--checkpoint", "main", "-o", "/dev/null", "--", "/bin/true"},
			"profile: --checkpoint and --snapshot-every write FILE.1, FILE.2, ... beside -o FILE: give -o FILE, not a device\n"},
	} {
		stdout, stderr, code := runRoot(c.args...)
		if code != 2 || stdout != "" || stderr != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
	// A binary profile is not written to a terminal.
	tty := openTerminal(t)
	for _, args := range [][]string{{"merge", "a.data", "-o", "-"}, {"prune", "a.data", "-o", "-"}} {
		root := newRootCmd()
		var errb bytes.Buffer
		root.SetArgs(args)
		root.SetOut(tty)
		root.SetErr(&errb)
		want := "profile: -o -: the standard output is a terminal, and a profile is binary: redirect it, or give -o FILE\n"
		if code := exitCode(root.Execute(), &errb); code != 2 || errb.String() != want {
			t.Errorf("%v to a terminal: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// openTerminal opens a new pseudo-terminal and returns its terminal end.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// A snapshot that cannot be written beside -o is kept aside, as the
// final profile is; the line says why and where.
func TestSnapshotKept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := filepath.Join(t.TempDir(), "gone") // removed during the trace
	f := traceFlags{out: filepath.Join(gone, "s.data")}
	var opt attach.Options
	var w strings.Builder
	f.startSnapshots(&opt, &w)
	p := modeltest.Sample()
	p.Meta.TracedCalls = 19
	opt.Live.Snapshot(p, attach.Stats{})
	f.snaps.close()
	files, _ := filepath.Glob(filepath.Join(tmp, "s.data.*.1"))
	want := fmt.Sprintf("profile: snapshot: -o %s/s.data.1: directory %s does not exist; kept the profile at %v instead (19 calls)\n",
		gone, gone, strings.Join(files, " "))
	if len(files) != 1 || w.String() != want {
		t.Fatalf("kept %v, said %q; want one file and %q", files, w.String(), want)
	}
	got, err := model.ReadFile(files[0])
	if err != nil {
		t.Fatalf("kept snapshot: %v", err)
	}
	if !got.Meta.Partial || len(got.Threads) != len(p.Threads) {
		t.Errorf("kept snapshot: meta %+v, %d threads", got.Meta, len(got.Threads))
	}
}
