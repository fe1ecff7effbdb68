package cmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/profile-dev/profile/model"
)

// A program started through a link named otherwise (as redis-server is
// a link to redis-check-rdb) is named as started beside the file it runs:
// record ./myserver, a link to forks, gives every image of it (the
// first, its fork, the child before its exec) "myserver (…/forks)" in
// info and summary, the image the child execs (exec_target, started by
// its own name) its path alone, and the profile keeps argv[0] and comm
// beside the resolved exe. summary's JSON keeps exe the resolved path.
func TestStartedAsRecordedThroughLink(t *testing.T) {
	dir := t.TempDir()
	exe, target := wl(t, "forks"), wl(t, "exec_target")
	if err := os.Symlink(exe, filepath.Join(dir, "myserver")); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, dir, "record", "-o", "r.data", "--", "./myserver"); code != 0 {
		t.Fatalf("record ./myserver: exit %d\n%s", code, stderr)
	}
	p, err := model.ReadFile(filepath.Join(dir, "r.data"))
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Meta; m.Exe != exe || m.Comm != "myserver" || len(m.Command) != 1 || m.Command[0] != "./myserver" {
		t.Errorf("meta exe %q comm %q command %q, want %s, myserver, ./myserver", m.Exe, m.Comm, m.Command, exe)
	}
	// forks.expected.json: the first image, a forked child, a child that
	// execs exec_target
	var names []string
	for _, pr := range p.Processes {
		names = append(names, pr.Comm+" "+pr.Exe)
	}
	want := []string{"myserver " + exe, "myserver " + exe, "myserver " + exe, "exec_target " + target}
	if !slices.Equal(names, want) {
		t.Errorf("processes' comm and exe %q, want %q", names, want)
	}

	started := regexp.QuoteMeta("myserver (" + exe + ")")
	info, stderr, code := run(t, dir, "info", "r.data")
	if code != 0 {
		t.Fatalf("info: exit %d\n%s", code, stderr)
	}
	for _, re := range []string{`(?m)^exe +` + started + `$`, `(?m)^command +\./myserver$`,
		`(?m)^  \d+ +- +- +` + started + ` +exit 0$`,
		`(?m)^  \d+ +\d+ +do_fork \(tid \d+\) +` + started + ` +exit 0$`,
		`(?m)^  \d+ +\d+ +do_fork_exec \(tid \d+\) +` + started + ` +exec$`,
		`(?m)^  \d+ +\d+ +\(exec\) +` + regexp.QuoteMeta(target) + ` +exit 0$`} {
		if !regexp.MustCompile(re).MatchString(info) {
			t.Errorf("info does not match %s:\n%s", re, info)
		}
	}
	table, stderr, code := run(t, dir, "summary", "r.data")
	if code != 0 {
		t.Fatalf("summary: exit %d\n%s", code, stderr)
	}
	for _, re := range []string{`│ exe +│ ` + started + ` +│`, `(?m)^│ +\d+ │ +0 │ - +│ ` + started + ` +│ +0 │`,
		`(?m)^│ +\d+ │ +\d+ │ - +│ ` + regexp.QuoteMeta(target) + ` +│ +0 │`} {
		if !regexp.MustCompile(re).MatchString(table) {
			t.Errorf("summary does not match %s:\n%s", re, table)
		}
	}
	var s struct {
		Meta struct {
			Exe     string   `json:"exe"`
			Command []string `json:"command"`
		} `json:"meta"`
	}
	decodeSummary(t, dir, &s, "r.data")
	if s.Meta.Exe != exe || len(s.Meta.Command) != 1 || s.Meta.Command[0] != "./myserver" {
		t.Errorf("summary JSON meta %+v, want exe %s, command [./myserver]", s.Meta, exe)
	}
}

// attach to a program started through a link names it as started too:
// argv[0] and comm are read from /proc when the tracer attaches.
func TestStartedAsAttachedThroughLink(t *testing.T) {
	dir := t.TempDir()
	exe := wl(t, "longrun")
	link := filepath.Join(dir, "mydaemon")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	target := exec.Command(link, "--threads", "1", "--seconds", "10")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	time.Sleep(200 * time.Millisecond) // running its loops
	if _, stderr, code := run(t, dir, "attach", "--pid", itoa(target.Process.Pid), "--duration", "300ms", "-o", "a.data"); code != 0 {
		t.Fatalf("attach: exit %d\n%s", code, stderr)
	}
	p, err := model.ReadFile(filepath.Join(dir, "a.data"))
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Meta; m.Exe != exe || m.Comm != "mydaemon" || len(m.Command) == 0 || m.Command[0] != link {
		t.Errorf("meta exe %q comm %q command %q, want %s, mydaemon, %s ...", m.Exe, m.Comm, m.Command, exe, link)
	}
	info, stderr, code := run(t, dir, "info", "a.data")
	started := regexp.QuoteMeta("mydaemon (" + exe + ")")
	for _, re := range []string{`(?m)^exe +` + started + `$`, `(?m)^  ` + itoa(target.Process.Pid) + ` +- +- +` + started + ` +running$`} {
		if code != 0 || !regexp.MustCompile(re).MatchString(info) {
			t.Errorf("info does not match %s (exit %d, %s):\n%s", re, code, stderr, info)
		}
	}
}
