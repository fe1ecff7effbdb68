package cmd

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/top"
)

// complete runs "profile __complete args..." and returns the candidates
// (descriptions cut) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	stdout, _, code := runRoot(append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d", args, code)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	vals := lines[:len(lines)-1]
	for i, v := range vals {
		vals[i], _, _ = strings.Cut(v, "\t")
	}
	return vals, lines[len(lines)-1]
}

func TestCompletionValues(t *testing.T) {
	const (
		noFiles = ":4" // cobra.ShellCompDirectiveNoFileComp
		byExt   = ":8" // cobra.ShellCompDirectiveFilterFileExt
	)
	for _, c := range []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"export", "x.data", "--format", ""}, []string{"pprof", "folded", "chrome"}, noFiles},
		{[]string{"export", "x.data", "--format", "p"}, []string{"pprof", "folded", "chrome"}, noFiles}, // the shell filters
		{[]string{"export", "x.data", "--value", ""}, []string{"self", "calls", "total"}, noFiles},
		{[]string{"render", "x.data", "--flame", "--value", ""}, []string{"self", "calls", "total"}, noFiles},
		{[]string{"summary", "x.data", "--format", ""}, []string{"table", "markdown", "json", "csv"}, noFiles},
		{[]string{"components", "x.data", "--format", ""}, []string{"text", "markdown", "json"}, noFiles},
		{[]string{"diff", "a.data", "b.data", "--format", ""}, []string{"text", "markdown", "json"}, noFiles},
		{[]string{"diff", "a.data", "b.data", "--sort", ""}, []string{"self", "total", "calls", "name"}, noFiles},
		{[]string{"prune", "x.data", "--metric", ""}, []string{"total", "self", "calls"}, noFiles},
		{[]string{"top", "--sort", ""}, []string{"calls/s", "self", "total", "calls", "self-all", "name"}, noFiles},
		{[]string{"top", "--format", ""}, []string{"text", "json"}, noFiles},
		{[]string{"record", "--probes", ""}, []string{"auto", "inline", "trap"}, noFiles},
		{[]string{"attach", "--probes", ""}, []string{"auto", "inline", "trap"}, noFiles},
		{[]string{"version", "--format", ""}, []string{"text", "json"}, noFiles},
		{[]string{"summary", "x.data", "--top", ""}, nil, noFiles},
		{[]string{"prune", "x.data", "--threshold", ""}, nil, noFiles},
		// file arguments and file flags, by extension
		{[]string{"info", ""}, []string{"data"}, byExt},
		{[]string{"summary", ""}, []string{"data"}, byExt},
		{[]string{"summary", "x.data", ""}, nil, noFiles},
		{[]string{"render", ""}, []string{"data"}, byExt},
		{[]string{"render", "x.data", "--diff", ""}, []string{"data"}, byExt},
		{[]string{"export", "--format", "pprof", ""}, []string{"data"}, byExt},
		{[]string{"prune", ""}, []string{"data"}, byExt},
		{[]string{"components", ""}, []string{"data"}, byExt},
		{[]string{"components", "x.data", "--rules", ""}, []string{"yaml", "yml"}, byExt},
		{[]string{"merge", "a.data", "b.data", ""}, []string{"data"}, byExt},
		{[]string{"merge", "a.data", "-o", ""}, []string{"data"}, byExt},
		{[]string{"diff", "a.data", ""}, []string{"data"}, byExt},
		{[]string{"diff", "a.data", "b.data", ""}, nil, noFiles},
		{[]string{"import", ""}, pprofExts, byExt},
		{[]string{"import", "cpu.pb.gz", "-o", ""}, []string{"data"}, byExt},
		{[]string{"record", "-o", ""}, []string{"data"}, byExt},
		{[]string{"version", ""}, nil, noFiles},
		{[]string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}, noFiles},
	} {
		vals, directive := complete(t, c.args...)
		if directive != c.directive || !sameSet(vals, c.want) {
			t.Errorf("__complete %q = %q %s, want %q %s", c.args, vals, directive, c.want, c.directive)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// The running processes complete attach and top --pid, named by command;
// profile itself (here the test) is left out.
func TestCompletionPids(t *testing.T) {
	self, parent := strconv.Itoa(os.Getpid()), strconv.Itoa(os.Getppid())
	stdout, _, _ := runRoot("__complete", "attach", "--pid", parent)
	if !strings.HasPrefix(stdout, parent+"\t") {
		t.Fatalf("attach --pid %s completes to %q, want the parent process", parent, stdout)
	}
	if vals, _ := complete(t, "attach", "--pid", self); len(vals) != 0 {
		t.Errorf("attach --pid %s completes to %q, want nothing", self, vals)
	}
	vals, _ := complete(t, "top", "--pid", "")
	if len(vals) < 2 || slices.Contains(vals, "2") { // 2 is kthreadd
		t.Errorf("top --pid completes to %q", vals)
	}
}

// Every value an enumerated flag completes to is one its command takes: an
// offline command runs with it on a sample profile; a live one's values
// go through the parser the command uses.
func TestCompletionValuesAccepted(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTemp(t, dir, "p.data", modeltest.Sample())
	base := map[string][]string{ // an invocation the flag's value is added to
		"profile summary":    {"summary", "p.data"},
		"profile export":     {"export", "p.data", "--format", "folded", "-o", "-"},
		"profile render":     {"render", "p.data", "--flame", "-o", "-"},
		"profile components": {"components", "p.data"},
		"profile diff":       {"diff", "p.data", "p.data"},
		"profile prune":      {"prune", "p.data", "-o", "pruned.data"},
		"profile version":    {"version"},
	}
	live := map[string]func(string) bool{ // flag -> its parser
		"probes": func(v string) bool { return attach.CheckProbes(v) == nil },
		"sort":   func(v string) bool { _, ok := top.ParseColumn(v); return ok },
		"format": func(v string) bool { return v == "text" || v == "json" }, // top's own check
		"scope":  func(v string) bool { _, err := busyScope(v); return err == nil },
	}
	tried := 0
	walk(newRootCmd(), func(c *cobra.Command) {
		for _, f := range flagsOf(c) {
			vals, _ := choicesOf(c, f)
			for _, v := range vals {
				tried++
				if args, ok := base[c.CommandPath()]; ok {
					if c.CommandPath() == "profile render" && f.Name != "value" {
						args = []string{"render", "p.data", "--dot", "-o", "-"} // a call-graph flag
					}
					args = append(slices.Clone(args), "--"+f.Name, v)
					if _, stderr, code := runRoot(args...); code != 0 {
						t.Errorf("%q: exit %d: %s", args, code, stderr)
					}
					continue
				}
				parse, ok := live[f.Name]
				switch {
				case !ok:
					t.Errorf("%s --%s: no way to check its values here", c.CommandPath(), f.Name)
				case !parse(v):
					t.Errorf("%s --%s %s: refused by its parser", c.CommandPath(), f.Name, v)
				}
			}
		}
	})
	if tried < 40 {
		t.Errorf("only %d values tried", tried)
	}
}

// profile completion SHELL writes cobra's script for each shell.
func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "__start_profile",
		"zsh":        "#compdef profile",
		"fish":       "complete -c profile",
		"powershell": "Register-ArgumentCompleter",
	} {
		stdout, stderr, code := runRoot("completion", shell)
		if code != 0 || stderr != "" || !strings.Contains(stdout, want) {
			t.Errorf("completion %s: exit %d, stderr %q, %d bytes without %q", shell, code, stderr, len(stdout), want)
		}
	}
}
