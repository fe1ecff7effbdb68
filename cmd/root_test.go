package cmd

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model/modeltest"
)

// runRoot runs the whole command line as Execute does and returns stdout,
// stderr and the exit status.
func runRoot(args ...string) (string, string, int) {
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	code := exitCode(root.Execute(), &errb)
	return out.String(), errb.String(), code
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTemp(t, dir, "p.data", modeltest.Sample())
	os.WriteFile("junk.data", []byte("not a profile"), 0o644)
	os.Mkdir("out", 0o755)
	for _, c := range []struct {
		args []string
		code int
		want string // in the one line on stderr
	}{
		{[]string{"--version"}, 0, ""},
		{[]string{}, 0, ""}, // help
		{[]string{"summary", "p.data"}, 0, ""},
		{[]string{"export", "p.data", "--format", "folded", "-o", "-"}, 0, ""},
		// usage errors: cobra's own
		{[]string{"sumary", "p.data"}, 2, `unknown command "sumary" for "profile" (did you mean summary?)`},
		{[]string{"--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"summary", "--bogus", "p.data"}, 2, "unknown flag: --bogus"},
		{[]string{"summary", "--top", "x", "p.data"}, 2, `invalid argument "x" for "--top"`},
		{[]string{"merge"}, 2, "requires at least 1 arg"},
		{[]string{"prune", "a", "b"}, 2, "accepts 1 arg"},
		{[]string{"attach", "x"}, 2, `unknown command "x" for "profile attach"`},
		{[]string{"record"}, 2, "requires at least 1 arg"},
		{[]string{"render", "p.data", "--svg", "--png"}, 2, "none of the others"},
		// usage errors: bad values
		{[]string{"record", "--duration", "-1s", "--", "/bin/true"}, 2, "--duration must be positive"},
		{[]string{"record", "--duration", "x", "--", "/bin/true"}, 2, `invalid argument "x" for "--duration"`},
		{[]string{"record", "--filter", "(", "--", "/bin/true"}, 2, `--filter "("`},
		{[]string{"record", "-o", "", "--", "/bin/true"}, 2, "-o: empty file name"},
		{[]string{"prune", "p.data", "--threshold", "1x"}, 2, `bad threshold "1x"`},
		{[]string{"prune", "p.data", "--threshold", "-5%"}, 2, "between 0% and 100%"},
		{[]string{"prune", "p.data", "--threshold", "150%"}, 2, "between 0% and 100%"},
		{[]string{"prune", "p.data", "--threshold", "-5ms"}, 2, "must not be negative"},
		{[]string{"prune", "p.data", "--metric", "calls", "--threshold", "5ms"}, 2, "needs a time metric"},
		{[]string{"prune", "p.data", "--metric", "wall"}, 2, `bad metric "wall"`},
		{[]string{"prune", "p.data", "--min-calls", "-1"}, 2, "must not be negative"},
		{[]string{"prune", "p.data", "--keep", "("}, 2, "bad --keep regular expression"},
		{[]string{"render", "p.data", "--hot", "ten"}, 2, "bad --hot"},
		{[]string{"render", "p.data", "--hot", "2%", "--warm", "5%"}, 2, "must not exceed --hot"},
		{[]string{"summary", "p.data", "--format", "xml"}, 2, `unknown --format "xml"`},
		{[]string{"summary", "p.data", "--top", "-1"}, 2, "must not be negative"},
		{[]string{"export", "p.data", "--format", "svg"}, 2, `unknown --format "svg": use chrome or folded or pprof`},
		{[]string{"export", "p.data", "--format", "folded", "--value", "wall"}, 2, `bad --value: unknown value "wall"`},
		{[]string{"export", "p.data"}, 2, `required flag(s) "format" not set`},
		{[]string{"export", "--format", "pprof"}, 2, "accepts 1 arg(s)"},
		// failures of the work
		{[]string{"info", "missing.data"}, 1, "missing.data: no such file"},
		{[]string{"summary", "junk.data"}, 1, "junk.data: not a profile file"},
		{[]string{"export", "junk.data", "--format", "pprof"}, 1, "junk.data: not a profile file"},
		{[]string{"export", "missing.data", "--format", "folded"}, 1, "missing.data: no such file"},
		{[]string{"export", "p.data", "--format", "folded", "-o", "out"}, 1, "-o out: is a directory"},
		{[]string{"merge", "p.data", "-o", "out"}, 1, "-o out: is a directory"},
		{[]string{"prune", "p.data", "-o", "no/such/dir.data"}, 1, "-o no/such/dir.data: directory no/such does not exist"},
		{[]string{"render", "p.data", "-o", "out"}, 1, "-o out: is a directory"},
		{[]string{"record", "-o", "out", "--", "/bin/true"}, 1, "-o out: is a directory"},
		{[]string{"attach", "--pid", "1", "-o", "out"}, 1, "-o out: is a directory"},
	} {
		_, stderr, code := runRoot(c.args...)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", c.args, code, c.code, stderr)
			continue
		}
		if c.want == "" {
			if stderr != "" {
				t.Errorf("%q: stderr %q", c.args, stderr)
			}
			continue
		}
		if !strings.HasPrefix(stderr, "profile: ") || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: stderr %q, want one line with %q", c.args, stderr, c.want)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{&exitError{139}, 139, ""},
		{errors.New("boom"), 1, "profile: boom\n"},
		{usagef("bad --x %d", 3), 2, "profile: bad --x 3\n"},
	} {
		var b bytes.Buffer
		if code := exitCode(c.err, &b); code != c.code || b.String() != c.stderr {
			t.Errorf("exitCode(%v) = %d, %q; want %d, %q", c.err, code, b.String(), c.code, c.stderr)
		}
	}
}
