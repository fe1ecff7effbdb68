package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/render"
)

func TestRenderCmd(t *testing.T) {
	path := sampleFile(t)
	dir := filepath.Dir(path)
	// default: SVG next to the input
	_, stderr, err := runSub(newRenderCmd(), path)
	if err != nil || !strings.Contains(stderr, "wrote "+filepath.Join(dir, "profile.svg")) {
		t.Fatalf("default: %v %q", err, stderr)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "profile.svg")); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Fatalf("profile.svg: %v", err)
	}
	// DOT to stdout equals render.DOT with the parsed options
	out, _, err := runSub(newRenderCmd(), path, "--dot", "-o", "-", "--hot", "20%", "--warm", "0.05", "--threads", "--pid", "100")
	want, _ := render.DOT(modeltest.Sample(), render.Options{Hot: 0.2, Warm: 0.05, Threads: true, Scope: model.Scope{Pid: 100}})
	if err != nil || out != string(want) {
		t.Fatalf("--dot -o -: %v\n%s", err, out)
	}
	if _, _, err := runSub(newRenderCmd(), path, "--png", "-o", filepath.Join(dir, "g.png")); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "g.png")); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("g.png: %v", err)
	}
	if _, _, err := runSub(newRenderCmd(), path, "--dot"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "profile.dot")); err != nil {
		t.Fatal(err)
	}
}

func TestRenderCmdErrors(t *testing.T) {
	path := sampleFile(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{path, "--hot", "ten"}, "bad --hot"},
		{[]string{path, "--warm", "150%"}, "bad --warm"},
		{[]string{path, "--hot", "2%", "--warm", "5%"}, "must not exceed --hot"},
		{[]string{path, "--svg", "--png"}, "none of the others"},
		{[]string{path, "--tid", "4242"}, "no thread 4242"},
		{[]string{path, "-o", filepath.Join(t.TempDir(), "no", "such", "dir.svg")}, "does not exist"},
	} {
		_, _, err := runSub(newRenderCmd(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.args, err, c.want)
		}
	}
}

func TestRenderedName(t *testing.T) {
	for in, want := range map[string]string{
		"profile.data": "profile.svg", "out/run1": "out/run1.svg", "a.b/prof": "a.b/prof.svg",
		".hidden": ".hidden.svg", "x.tar.gz": "x.tar.svg",
	} {
		if got := renderedName(in, "svg"); got != want {
			t.Errorf("renderedName(%q) = %q, want %q", in, got, want)
		}
	}
}
