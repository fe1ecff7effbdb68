package cmd_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// profile version of a binary built as the Makefile builds it, from this
// git checkout: the version set by -ldflags, this Go, the checkout's commit
// and whether it had uncommitted changes, as git says.
func TestVersionOfBuild(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	status, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "profile")
	build := exec.Command("go", "build", "-buildvcs=true",
		"-ldflags", "-X github.com/profile-dev/profile/cmd.Version=1.2.3-test", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if info, _ := exec.Command("go", "version", "-m", bin).Output(); !strings.Contains(string(info), "vcs.revision=") {
		// Go stamps nothing in some checkouts (a git worktree, say).
		t.Skipf("go build stamped no commit into the binary here:\n%s", info)
	}
	out, err := exec.Command(bin, "version", "--format", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Version, Go, Commit string
		Modified            *bool
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	modified := len(status) > 0
	if v.Version != "1.2.3-test" || v.Go != runtime.Version() || v.Commit != strings.TrimSpace(string(head)) ||
		v.Modified == nil || *v.Modified != modified {
		t.Errorf("version --format json:\n%s\nwant version 1.2.3-test, go %s, commit %s, modified %v",
			out, runtime.Version(), head, modified)
	}
	text, _ := exec.Command(bin, "version").Output()
	want := "profile  1.2.3-test\ngo       " + runtime.Version() + "\ncommit   " + v.Commit
	if modified {
		want += " (modified)"
	}
	if string(text) != want+"\n" {
		t.Errorf("version:\n%s\nwant\n%s", text, want)
	}
	if old, _ := exec.Command(bin, "--version").Output(); string(old) != "profile version 1.2.3-test\n" {
		t.Errorf("--version: %q", old)
	}
}
