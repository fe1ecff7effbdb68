package cmd

import (
	"regexp"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/prune"
)

func TestPruneCmd(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTemp(t, dir, "profile.data", modeltest.Sample())
	for _, c := range []struct {
		args []string
		out  string
		opt  prune.Options
	}{
		{[]string{"profile.data"}, "profile.pruned.data", prune.Options{Threshold: 0.01}},
		{[]string{"profile.data", "--threshold", "5%", "--metric", "self", "-o", "self.data"}, "self.data", prune.Options{Threshold: 0.05, Metric: prune.Self}},
		{[]string{"profile.data", "--threshold", "100ns", "-o", "ns.data"}, "ns.data", prune.Options{MinNs: 100}},
		{[]string{"profile.data", "--min-calls", "2", "-o", "calls.data"}, "calls.data", prune.Options{MinCalls: 2}},
		{[]string{"profile.data", "--keep", "compute", "-o", "keep.data"}, "keep.data", prune.Options{Keep: regexp.MustCompile("compute")}},
		{[]string{"profile.data", "--keep", "compute", "--threshold", "20%", "-o", "keep20.data"}, "keep20.data", prune.Options{Threshold: 0.2, Keep: regexp.MustCompile("compute")}},
	} {
		stderr, err := execute(newPruneCmd(), c.args...)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if !strings.Contains(stderr, "wrote "+c.out) {
			t.Errorf("%q: stderr %q", c.args, stderr)
		}
		got, err := model.ReadFile(c.out)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := prune.Prune(modeltest.Sample(), c.opt)
		if dumpNodes(got) != dumpNodes(want) {
			t.Errorf("%q: output differs from prune.Prune with %+v", c.args, c.opt)
		}
	}
}

func dumpNodes(p *model.Profile) string {
	var b strings.Builder
	for _, t := range p.Threads {
		for _, n := range t.Nodes {
			b.WriteString(p.FuncName(n.Func))
			b.WriteString(" ")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestPruneCmdErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTemp(t, dir, "profile.data", modeltest.Sample())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"profile.data", "--threshold", "abc"}, `bad threshold "abc": want a percentage like 1% or a duration like 5ms`},
		{[]string{"profile.data", "--threshold", "150%"}, "between 0% and 100%"},
		{[]string{"profile.data", "--metric", "wall"}, `bad metric "wall"`},
		{[]string{"profile.data", "--metric", "calls", "--threshold", "5ms"}, "needs a time metric"},
		{[]string{"profile.data", "--keep", "("}, "bad --keep regular expression"},
		{[]string{"profile.data", "--min-calls", "-1"}, "must not be negative"},
		{[]string{"nope.data"}, "nope.data: no such file"},
		{[]string{}, "accepts 1 arg"},
	} {
		_, err := execute(newPruneCmd(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: err = %v, want one line with %q", c.args, err, c.want)
		}
	}
}

func TestPrunedName(t *testing.T) {
	for in, want := range map[string]string{
		"profile.data":     "profile.pruned.data",
		"dir/run.1.data":   "dir/run.1.pruned.data",
		"profile":          "profile.pruned",
		"dir.d/profile":    "dir.d/profile.pruned",
		".data":            ".data.pruned",
		"/tmp/merged.data": "/tmp/merged.pruned.data",
	} {
		if got := prunedName(in); got != want {
			t.Errorf("prunedName(%q) = %q, want %q", in, got, want)
		}
	}
}
