package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// execute runs a subcommand with args and returns its stderr and error.
func execute(c *cobra.Command, args ...string) (string, error) {
	var out, errb bytes.Buffer
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errb)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.Execute()
	return errb.String(), err
}

func writeTemp(t *testing.T, dir, name string, p *model.Profile) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := model.WriteFile(path, p); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMergeCmd(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTemp(t, dir, "a.data", modeltest.Sample())
	writeTemp(t, dir, "b.data", modeltest.Synthetic(2000, 3, 1))
	stderr, err := execute(newMergeCmd(), "b.data", "a.data")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "wrote merged.data (2 runs, 3 processes, 7 threads in 3 levels)") {
		t.Errorf("stderr %q", stderr)
	}
	m, err := model.ReadFile("merged.data")
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Mode != "merge" || !reflect.DeepEqual(m.Meta.Sources, []string{"a.data", "b.data"}) {
		t.Errorf("meta %+v", m.Meta)
	}
	// merging the result again with -o keeps the previous file as .old
	if _, err := execute(newMergeCmd(), "merged.data", "-o", "merged.data"); err != nil {
		t.Fatal(err)
	}
	again, err := model.ReadFile("merged.data")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, m) {
		t.Error("merging a composite alone changed it")
	}
	if _, err := os.Stat("merged.data.old"); err != nil {
		t.Error(err)
	}
}

func TestMergeCmdErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("junk.data", []byte("not a profile"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "requires at least 1 arg"},
		{[]string{"missing.data"}, "missing.data: no such file"},
		{[]string{"junk.data"}, "junk.data: not a profile file"},
	} {
		_, err := execute(newMergeCmd(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: err = %v, want one line with %q", c.args, err, c.want)
		}
	}
}

// A merge of detached profiles is detached, not partial; a partial input
// keeps the merge partial, with its reason.
func TestMergeDetached(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, c := range []struct {
		name              string
		a, b              model.Meta
		partial, detached bool
		reason            string
	}{
		{"both detached", model.Meta{Detached: true}, model.Meta{Detached: true}, false, true, ""},
		{"one detached", model.Meta{Detached: true}, model.Meta{}, false, true, ""},
		{"neither", model.Meta{}, model.Meta{}, false, false, ""},
		{"detached and crashed", model.Meta{Detached: true}, model.Meta{Partial: true, PartialReason: "target crashed: SIGSEGV"},
			true, true, "target crashed: SIGSEGV"},
	} {
		a, b := modeltest.Sample(), modeltest.Sample()
		a.Meta, b.Meta = c.a, c.b
		writeTemp(t, dir, "a.data", a)
		writeTemp(t, dir, "b.data", b)
		if _, stderr, code := runRoot("merge", "a.data", "b.data", "-o", "m.data"); code != 0 {
			t.Fatalf("%s: merge: %s", c.name, stderr)
		}
		m, err := model.ReadFile("m.data")
		if err != nil {
			t.Fatal(err)
		}
		if m.Meta.Partial != c.partial || m.Meta.Detached != c.detached || m.Meta.PartialReason != c.reason {
			t.Errorf("%s: merged partial %v (%q), detached %v; want %v (%q), %v", c.name, m.Meta.Partial,
				m.Meta.PartialReason, m.Meta.Detached, c.partial, c.reason, c.detached)
		}
	}
}
