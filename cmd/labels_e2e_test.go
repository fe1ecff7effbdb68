package cmd_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
)

// attach --duration -o - writes the profile, and only it, to standard
// output; the profile is detached, not partial, and info and summary say
// so, with the target still running (no exit code 0).
func TestAttachToStdoutDetached(t *testing.T) {
	target := startLongrunFor(t, "10")
	dir := t.TempDir()
	stdout, stderr, code := run(t, dir, "attach", "--pid", itoa(target.Process.Pid), "--duration", "500ms", "-o", "-")
	if code != 0 || !regexp.MustCompile(`(?m)^profile: wrote the standard output \(\d+ calls, `).MatchString(stderr) {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	p, err := model.Read(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("standard output is no profile (%d bytes): %v", len(stdout), err)
	}
	if !p.Meta.Detached || p.Meta.Partial || p.Meta.TracedCalls == 0 {
		t.Errorf("meta %+v: want detached, not partial, with calls", p.Meta)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("attach -o - left files: %v", entries)
	}
	file := filepath.Join(dir, "a.data")
	os.WriteFile(file, []byte(stdout), 0o644)

	info, stderr, code := run(t, dir, "info", file)
	for _, re := range []string{`(?m)^partial +no$`, `(?m)^ended +detached \(the target went on running\)$`,
		`(?m)^  ` + itoa(target.Process.Pid) + ` .* running$`} {
		if code != 0 || !regexp.MustCompile(re).MatchString(info) {
			t.Errorf("info does not match %s (exit %d, %s):\n%s", re, code, stderr, info)
		}
	}
	var doc struct {
		Meta struct {
			Partial  *bool `json:"partial"`
			Detached *bool `json:"detached"`
		} `json:"meta"`
		Processes []struct {
			ExitCode int    `json:"exit_code"`
			State    string `json:"state"`
		} `json:"processes"`
	}
	decodeSummary(t, dir, &doc, file)
	m := doc.Meta
	if m.Partial == nil || *m.Partial || m.Detached == nil || !*m.Detached || len(doc.Processes) != 1 ||
		doc.Processes[0].State != "running" {
		t.Errorf("summary json: meta %+v, processes %+v", m, doc.Processes)
	}
	table, _, _ := run(t, dir, "summary", file)
	for _, re := range []string{`│ partial +│ no +│`, `│ detached +│ yes \(the target went on running\) +│`,
		`│ +` + itoa(target.Process.Pid) + ` │ .* │ +running │ - +│`} {
		if !regexp.MustCompile(re).MatchString(table) {
			t.Errorf("summary table does not match %s:\n%s", re, table)
		}
	}
}

// record -o /dev/null traces and writes nothing anywhere; the program's
// status is still the exit status.
func TestRecordToDevNull(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := run(t, dir, "record", "-o", "/dev/null", "--", wl(t, "recursion"))
	if code != 0 || !strings.Contains(stderr, "profile: wrote /dev/null (") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("record -o /dev/null left files: %v", entries)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v %v", fi.Mode(), err)
	}
}
