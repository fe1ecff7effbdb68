package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// A mistake in the command line of any command, the built binary's, exits
// with status 2 and one line on stderr naming it, before any work: nothing
// on stdout, no file written.
func TestUsageErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	if err := model.WriteFile(filepath.Join(dir, "p.data"), modeltest.Sample()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string // in the one line on stderr
	}{
		{[]string{"sumary", "p.data"}, `unknown command "sumary" for "profile" (did you mean summary?)`},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"info"}, "accepts 1 arg(s), received 0"},
		{[]string{"info", "p.data", "--top", "3"}, "unknown flag: --top"},
		{[]string{"record"}, "requires at least 1 arg(s)"},
		{[]string{"record", "--probes", "fast", "--", "/bin/true"}, `unknown probe kind "fast"`},
		{[]string{"record", "-o", "", "--", "/bin/true"}, "-o: empty file name"},
		{[]string{"record", "--duration", "-1s", "--", "/bin/true"}, "--duration must be positive"},
		{[]string{"record", "--slow", "10ms", "--", "/bin/true"}, "--slow and --detail-if choose among the calls of --detail REGEX"},
		{[]string{"record", "--detail", "(", "--", "/bin/true"}, "--detail: error parsing regexp"},
		{[]string{"record", "--detail", "f", "--detail-if", "rax<0", "--", "/bin/true"}, `--detail-if: condition "rax<0"`},
		{[]string{"record", "--detail", "f", "--detail-limit", "0", "--", "/bin/true"}, "--detail-limit must be at least 1"},
		{[]string{"record", "--counted", "(", "--", "/bin/true"}, "--counted: error parsing regexp"},
		{[]string{"record", "--counted", "f", "--probes", "trap", "--", "/bin/true"}, "--counted takes inline probes: not with --probes trap"},
		{[]string{"record", "--sample", "1us", "--", "/bin/true"}, "--sample must be at least 10us, not 1µs"},
		{[]string{"attach", "--pid", "1", "--timed", "f", "--sample", "0"}, "--timed keeps functions timed that sampling would move to counting: not with --sample 0"},
		{[]string{"record", "--sample", "1ms", "--timed", "(", "--", "/bin/true"}, "--timed: error parsing regexp"},
		{[]string{"record", "--depth", "2", "--", "/bin/true"}, "--depth is how far --expand FUNC or --auto-expand follows callees: give one"},
		{[]string{"record", "--interval", "2s", "--", "/bin/true"}, "--interval is how often --auto-expand looks: give --auto-expand"},
		{[]string{"record", "--auto-expand", "-1", "--", "/bin/true"}, "bad --auto-expand -1: at least 1"},
		{[]string{"attach", "--pid", "1", "--auto-expand", "1", "--interval", "0s"}, "bad --interval 0s: must be positive"},
		{[]string{"record", "--expand", "main", "--depth", "0", "--", "/bin/true"}, "bad --depth 0: at least 1"},
		{[]string{"record", "--expand", "", "--", "/bin/true"}, "--expand: empty function name"},
		{[]string{"top", "--pid", "1", "--detail", "f"}, "top shows no trees"},
		{[]string{"attach"}, "attach needs --pid PID"},
		{[]string{"attach", "--pid", "-4"}, "--pid -4: not a process id"},
		{[]string{"attach", "--pid", "x"}, `invalid argument "x" for "-p, --pid" flag`},
		{[]string{"attach", "--pid", "1", "--exclude", "("}, `--exclude "("`},
		{[]string{"attach", "4242"}, `unknown command "4242" for "profile attach"`},
		{[]string{"merge"}, "requires at least 1 arg(s)"},
		{[]string{"merge", "p.data", "-o", ""}, "-o: empty file name"},
		{[]string{"prune", "p.data", "--threshold", "lots"}, `bad threshold "lots"`},
		{[]string{"prune", "p.data", "--metric", "wall"}, `bad metric "wall"`},
		{[]string{"prune", "p.data", "-o", ""}, "-o: empty file name"},
		{[]string{"summary", "p.data", "--format", "xml"}, `unknown --format "xml"`},
		{[]string{"summary", "p.data", "--pid", "-1"}, "bad --pid -1: must not be negative"},
		{[]string{"summary", "p.data", "--tid", "-1"}, "bad --tid -1: must not be negative"},
		{[]string{"summary", "p.data", "--threads", "--format", "csv"}, "--threads: not available with --format csv"},
		{[]string{"render", "p.data", "--svg", "--dot"}, "none of the others can be"},
		{[]string{"render", "p.data", "--hot", "150%"}, "bad --hot"},
		{[]string{"render", "p.data", "--tid", "-2"}, "bad --tid -2: must not be negative"},
		{[]string{"render", "p.data", "--value", "self"}, "--value is for --flame"},
		{[]string{"render", "p.data", "--flame", "--hot", "5%"}, "--hot is for the call graph, not --flame"},
		{[]string{"render", "p.data", "-o", ""}, "-o: empty file name"},
		{[]string{"export", "p.data"}, `required flag(s) "format" not set`},
		{[]string{"export", "p.data", "--format", "svg"}, `unknown --format "svg": use chrome or folded or pprof`},
		{[]string{"export", "p.data", "--format", "folded", "--value", "wall"}, `bad --value: unknown value "wall"`},
		{[]string{"export", "p.data", "--format", "folded", "-o", ""}, "-o: empty file name"},
		{[]string{"export", "p.data", "--format", "folded", "--scope", "idle"}, `bad --scope "idle": give busy or wall`},
		{[]string{"export", "p.data", "--format", "chrome", "--scope", "wall"}, "--scope is for pprof and folded"},
		{[]string{"render", "p.data", "--flame", "--scope", "cpu"}, `bad --scope "cpu": give busy or wall`},
		{[]string{"components", "p.data", "--format", "html"}, `unknown --format "html"`},
		{[]string{"components", "p.data", "--format", "json", "--svg"}, "none of the others can be"},
		{[]string{"components", "p.data", "-o", ""}, "-o: empty file name"},
		{[]string{"import"}, "accepts 1 arg(s), received 0"},
		{[]string{"import", "cpu.pb.gz", "-o", ""}, "-o: empty file name"},
		{[]string{"diff", "p.data"}, "accepts 2 arg(s), received 1"},
		{[]string{"diff", "p.data", "p.data", "--sort", "size"}, `bad --sort: unknown sort key "size"`},
		{[]string{"diff", "p.data", "p.data", "--scope", "cpu"}, `bad --scope "cpu": give busy or wall`},
		{[]string{"diff", "p.data", "p.data", "--fail-on", "self"}, "bad --fail-on"},
		{[]string{"diff", "p.data", "p.data", "--top", "-3"}, "bad --top -3: must not be negative"},
		{[]string{"top"}, "top needs --pid PID"},
		{[]string{"top", "--pid", "1", "--rows", "-1"}, "bad --rows -1: must not be negative"},
		{[]string{"top", "--pid", "1", "--sort", "size"}, `unknown --sort "size"`},
		{[]string{"top", "--pid", "1", "--interval", "10ms"}, "--interval 10ms: at least 100ms"},
		{[]string{"top", "--pid", "1", "--format", "csv"}, `unknown --format "csv"`},
		{[]string{"trees", "p.data", "--format", "xml"}, `unknown --format "xml": use text or json`},
		{[]string{"trees", "p.data", "--min", "-1s"}, "bad --min -1s: must not be negative"},
		{[]string{"trees", "p.data", "--min", "soon"}, `invalid argument "soon" for "--min"`},
		{[]string{"trees", "p.data", "--tid", "-1"}, "bad --tid -1: must not be negative"},
		{[]string{"discover", "C"}, "discover needs --pid PID or --exe FILE"},
		{[]string{"discover", "--exe", "prog", "--pid", "1", "C"}, "discover needs --pid PID or --exe FILE (one of them)"},
		{[]string{"discover", "--exe", "prog"}, "accepts 1 arg(s), received 0"},
		{[]string{"discover", "--pid", "-3", "C"}, "bad --pid -3: must be positive"},
		{[]string{"discover", "--exe", "prog", "C", "--depth", "0"}, "bad --depth 0: at least 1"},
		{[]string{"discover", "--exe", "prog", "C", "--format", "xml"}, `unknown --format "xml": use text or json`},
		{[]string{"version", "--format", "yaml"}, `unknown --format "yaml": use text or json`},
		{[]string{"version", "1"}, `unknown command "1" for "profile version"`},
		{[]string{"completion", "tcsh"}, `unknown command "tcsh" for "profile completion"`},
		{[]string{"completion", "bash", "extra"}, `unknown command "extra" for "profile completion bash"`},
		{[]string{"help", "nosuch"}, `unknown help topic "nosuch"`},
	}
	tried := map[string]bool{}
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			tried[c.args[0]] = true
			t.Run(strings.Join(c.args, " "), func(t *testing.T) {
				t.Parallel()
				stdout, stderr, code := run(t, dir, c.args...)
				lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
				if code != 2 || stdout != "" || len(lines) != 1 || !strings.HasPrefix(stderr, "profile: ") || !strings.Contains(stderr, c.want) {
					t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line with %q", code, stdout, stderr, c.want)
				}
			})
		}
	})
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files written: %v", entries)
	}
	// Every command is tried: the commands are what "profile <TAB>" lists.
	stdout, _, _ := run(t, dir, "__complete", "")
	for _, line := range strings.Split(stdout, "\n") {
		if name, _, _ := strings.Cut(line, "\t"); name != "" && !strings.HasPrefix(name, ":") && !tried[name] {
			t.Errorf("no bad invocation of profile %s", name)
		}
	}
}
