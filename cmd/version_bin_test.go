package cmd_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// binVersion is what profile version --format json says.
type binVersion struct {
	Version, Go, Commit string
	Modified            *bool
}

// versionOf runs the binary's version command in both formats and checks
// that the text says what the JSON does.
func versionOf(t *testing.T, bin string) binVersion {
	t.Helper()
	out, err := exec.Command(bin, "version", "--format", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v binVersion
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "profile  " + v.Version + "\ngo       " + v.Go + "\n"
	if v.Commit != "" {
		want += "commit   " + v.Commit
		if v.Modified != nil && *v.Modified {
			want += " (modified)"
		}
		want += "\n"
	}
	if text, _ := exec.Command(bin, "version").Output(); string(text) != want {
		t.Errorf("version:\n%s\nwant (as the JSON says)\n%s", text, want)
	}
	return v
}

func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Skipf("git %s: %v (not a git checkout?)", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// profile version of a binary built from this git checkout names the
// commit: as go build stamps it (the full commit; whether the checkout had
// uncommitted changes, as git status says), as make build builds it, and
// where Go stamps none (a git worktree, -buildvcs=false: the commit of the
// Makefile's git describe version, abbreviated).
func TestVersionOfBuild(t *testing.T) {
	head := git(t, "rev-parse", "HEAD")
	status := git(t, "status", "--porcelain")
	describe := git(t, "describe", "--tags", "--always", "--dirty")
	dir := t.TempDir()
	for _, c := range []struct {
		name, version string
		build         []string // the command, run in the module's root
		full          bool     // the full commit, from Go's stamp
	}{
		{"go build", "1.2.3-test", []string{"go", "build", "-buildvcs=true",
			"-ldflags", "-X github.com/profile-dev/profile/cmd.Version=1.2.3-test", "-o", "{bin}", "."}, true},
		{"make build", describe, []string{"make", "build", "BIN={bin}"}, false},
		{"no stamp", describe, []string{"go", "build", "-buildvcs=false",
			"-ldflags", "-X github.com/profile-dev/profile/cmd.Version=" + describe, "-o", "{bin}", "."}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			args := make([]string, len(c.build))
			for i, a := range c.build {
				args[i] = strings.ReplaceAll(a, "{bin}", bin)
			}
			build := exec.Command(args[0], args[1:]...)
			build.Dir = ".."
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
			}
			info, _ := exec.Command("go", "version", "-m", bin).Output()
			stamped := strings.Contains(string(info), "vcs.revision=")
			if c.full && !stamped {
				// Go stamps nothing in some checkouts (a git worktree, say):
				// the other builds cover those.
				t.Skipf("go build stamped no commit into the binary here:\n%s", info)
			}
			v := versionOf(t, bin)
			if v.Version != c.version || v.Go != runtime.Version() {
				t.Errorf("version %q, go %q; want %q, %q", v.Version, v.Go, c.version, runtime.Version())
			}
			switch {
			case v.Commit == "" || v.Modified == nil:
				t.Fatalf("no commit: %+v", v)
			case stamped:
				if v.Commit != head || *v.Modified != (status != "") {
					t.Errorf("commit %s, modified %v; want %s, %v (git status)", v.Commit, *v.Modified, head, status != "")
				}
			case len(v.Commit) < 7 || !strings.HasPrefix(head, v.Commit) || *v.Modified != strings.HasSuffix(describe, "-dirty"):
				t.Errorf("commit %s, modified %v; want an abbreviation of %s, modified as %s says", v.Commit, *v.Modified,
					head, describe)
			}
		})
	}
	if old, _ := exec.Command(filepath.Join(dir, "go-build"), "--version").Output(); string(old) != "profile version 1.2.3-test\n" {
		t.Errorf("--version: %q", old)
	}
}
