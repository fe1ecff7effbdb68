package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestKeptPattern(t *testing.T) {
	for out, want := range map[string]string{
		"profile.data":        "profile.*.data",
		"/mnt/full/run.data":  "run.*.data",
		"long.data.3":         "long.data.*.3",
		"noext":               "noext.*",
		".hidden":             ".hidden.*",
		"-":                   "profile.*.data",
		"/dev/full":           "full.*",
		"/":                   "profile.*.data",
		"dir/with space.data": "with space.*.data",
	} {
		if got := keptPattern(out); got != want {
			t.Errorf("keptPattern(%q) = %q, want %q", out, got, want)
		}
	}
}

// readKept reads the profile kept at path: a valid profile of p's threads,
// readable by this user only.
func readKept(t *testing.T, path string, p *model.Profile) {
	t.Helper()
	got, err := model.ReadFile(path)
	if err != nil {
		t.Fatalf("kept profile %s: %v", path, err)
	}
	if len(got.Threads) != len(p.Threads) {
		t.Errorf("kept profile %s: %d threads, want %d", path, len(got.Threads), len(p.Threads))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("kept profile %s: mode %v, %v; want 0600 in a shared directory", path, fi.Mode(), err)
	}
}

// A profile that cannot be written where asked is kept in $TMPDIR, named
// after the output, and the error says both in one line; when it cannot
// be kept either, the error says why and that it is lost.
func TestSaveOrKeep(t *testing.T) {
	p := modeltest.Sample()
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	os.Mkdir(gone, 0o755)
	for _, c := range []struct {
		name    string
		out     string
		stdout  failWriter
		tmp     string // $TMPDIR; "" for a new directory
		kept    string // the kept file's name pattern; "" when written at out
		lost    bool
		wantErr string
	}{
		{name: "written", out: filepath.Join(dir, "ok.data")},
		{name: "full device", out: "/dev/full", kept: "full.*", wantErr: "write /dev/full: no space left on device; kept the profile at "},
		{name: "directory gone", out: filepath.Join(gone, "run.data"), kept: "run.*.data",
			wantErr: "-o " + gone + "/run.data: directory " + gone + " does not exist; kept the profile at "},
		{name: "standard output failing", out: "-", kept: "profile.*.data",
			wantErr: "write the standard output: input/output error; kept the profile at "},
		{name: "nowhere", out: "/dev/full", tmp: filepath.Join(dir, "no-tmp"), lost: true,
			wantErr: "write /dev/full: no space left on device; keeping it in " + filepath.Join(dir, "no-tmp") +
				" failed too: no such file or directory: the profile is lost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := c.tmp
			if tmp == "" {
				tmp = t.TempDir()
			}
			t.Setenv("TMPDIR", tmp)
			if c.name == "directory gone" {
				os.Remove(gone) // during the trace
			}
			at, err := saveOrKeep(c.stdout, c.out, true, "", p)
			var ke *keptError
			switch {
			case c.kept == "" && !c.lost:
				if err != nil || at != c.out {
					t.Fatalf("saved at %q: %v", at, err)
				}
				if _, err := model.ReadFile(at); err != nil {
					t.Error(err)
				}
				return
			case !errors.As(err, &ke):
				t.Fatalf("saved at %q: %v, want a keptError", at, err)
			case !strings.HasPrefix(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n"):
				t.Errorf("error %q, want one line starting %q", err, c.wantErr)
			}
			if c.lost {
				if at != "" {
					t.Errorf("lost, but saved at %q", at)
				}
				return
			}
			if ok, _ := filepath.Match(filepath.Join(tmp, c.kept), at); !ok {
				t.Errorf("kept at %q, want %s in %s", at, c.kept, tmp)
			}
			if !strings.HasSuffix(err.Error(), at+" instead") {
				t.Errorf("error %q does not name %s", err, at)
			}
			readKept(t, at, p)
		})
	}
}

// The saves of a session that cannot write -o (a crash snapshot, then
// the final profile) go to one kept file, the last replacing the first.
func TestSaveSessionKept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	f := traceFlags{out: "/dev/full"}
	snapshot, final := modeltest.Sample(), modeltest.Synthetic(100, 2, 1)
	first, err := f.save(snapshot)
	if err == nil || first == "" {
		t.Fatalf("snapshot saved at %q: %v", first, err)
	}
	second, err := f.save(final)
	if err == nil || second != first {
		t.Fatalf("final profile saved at %q (%v), want over the snapshot's %q", second, err, first)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("%d files in $TMPDIR, want the one kept profile", len(entries))
	}
	got, err := model.ReadFile(second)
	if err != nil || len(got.Threads) != len(final.Threads) {
		t.Errorf("kept profile: %v, want the final one", err)
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1.0 KiB", 60 << 10: "60.0 KiB",
		1<<20 - 1: "1023.9 KiB", 5<<30 + 1<<29: "5.5 GiB", 1<<63 + 1<<62: "12884901888.0 GiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLowSpaceWarning(t *testing.T) {
	t.Setenv("TMPDIR", "/var/tmp")
	for _, c := range []struct {
		free uint64
		want string
	}{
		{0, "profile: warning: only 0 bytes free in /mnt: the profile may not fit (it would then be kept in /var/tmp)"},
		{60 << 10, "profile: warning: only 60.0 KiB free in /mnt: the profile may not fit (it would then be kept in /var/tmp)"},
		{lowSpace - 1, "profile: warning: only 15.9 MiB free in /mnt: the profile may not fit (it would then be kept in /var/tmp)"},
		{lowSpace, ""},
		{1 << 40, ""},
	} {
		if got := lowSpaceWarning("/mnt", c.free); got != c.want {
			t.Errorf("%d bytes free: %q, want %q", c.free, got, c.want)
		}
	}
}
