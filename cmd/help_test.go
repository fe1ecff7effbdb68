package cmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The metavar conventions of --help: a flag that takes a value names it in
// backquotes in its usage ("write to `FILE`" shows as "-o, --output FILE"),
// with one of these words.
var metavars = map[string]bool{
	"FILE":    true, // a file: completed with file names
	"PID":     true, // a process id
	"TID":     true, // a thread id
	"N":       true, // a count
	"D":       true, // a duration: 10s, 250ms
	"PCT":     true, // a percentage (10%) or a fraction (0.1)
	"AMOUNT":  true, // a percentage or a duration
	"REGEX":   true, // a regular expression
	"NAME":    true, // a name
	"FUNC":    true, // a function: symbol or module:symbol
	"EXPR":    true, // an expression (diff --fail-on)
	"CONTEXT": true, // a calling context: FUNC>FUNC>...
	"TITLE":   true, // free text
	// Enumerated: completed with their values (enumerated below).
	"FORMAT": true,
	"VALUE":  true,
	"COLUMN": true,
	"METRIC": true,
	"KIND":   true,
	"DIR":    true, // a directory: completed with directory names
}

// enumerated are the metavars of flags that take one of a few words.
var enumerated = []string{"FORMAT", "VALUE", "COLUMN", "METRIC", "KIND"}

// byType are the metavars a flag of a pflag value type may have; other
// types (string) may have any.
var byType = map[string][]string{
	"duration":    {"D"},
	"int":         {"N", "PID", "TID"},
	"int64":       {"N", "PID", "TID"},
	"stringArray": {"REGEX", "NAME", "EXPR", "FUNC"},
}

// walk calls f on c and every command below it.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// flagsOf lists the flags c defines, help and version left out (cobra's).
func flagsOf(c *cobra.Command) []*pflag.Flag {
	var fs []*pflag.Flag
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && f.Name != "version" {
			fs = append(fs, f)
		}
	})
	return fs
}

func TestHelpMetavars(t *testing.T) {
	root := newRootCmd()
	metavarOf := map[string]string{} // flag name -> its metavar, across commands
	where := map[string]string{}
	shorthand := map[string]string{} // -o -> output, across commands
	walk(root, func(c *cobra.Command) {
		for _, f := range flagsOf(c) {
			name := c.CommandPath() + " --" + f.Name
			if f.Shorthand != "" {
				if prev, ok := shorthand[f.Shorthand]; ok && prev != f.Name {
					t.Errorf("%s: -%s is --%s elsewhere", name, f.Shorthand, prev)
				}
				shorthand[f.Shorthand] = f.Name
			}
			metavar, _ := pflag.UnquoteUsage(f)
			if f.Value.Type() == "bool" {
				if strings.Contains(f.Usage, "`") {
					t.Errorf("%s: a switch with a backquoted metavar in %q (shown as if it took a value)", name, f.Usage)
				}
				continue
			}
			if !strings.Contains(f.Usage, "`") {
				t.Errorf("%s: no backquoted metavar in %q (--help would show %q)", name, f.Usage, metavar)
				continue
			}
			if !metavars[metavar] {
				t.Errorf("%s: metavar %q is none of the conventions (add it to metavars if new)", name, metavar)
			}
			if allowed, ok := byType[f.Value.Type()]; ok && !slices.Contains(allowed, metavar) {
				t.Errorf("%s: a %s flag shows %q, want one of %q", name, f.Value.Type(), metavar, allowed)
			}
			if prev, ok := metavarOf[f.Name]; ok && prev != metavar {
				t.Errorf("%s shows %q, %s shows %q", name, metavar, where[f.Name], prev)
			}
			metavarOf[f.Name], where[f.Name] = metavar, name

			// Completion matches the metavar: files for FILE, the values
			// for an enumerated flag, no file names for the others.
			comp, ok := c.GetFlagCompletionFunc(f.Name)
			switch {
			case metavar == "FILE":
				if ok {
					if _, d := comp(c, nil, ""); d != cobra.ShellCompDirectiveFilterFileExt {
						t.Errorf("%s: FILE completes with directive %d, want file extensions", name, d)
					}
				}
			case ok && metavar == "DIR":
				if _, d := comp(c, nil, ""); d != cobra.ShellCompDirectiveFilterDirs {
					t.Errorf("%s: DIR completes with directive %d, want directories", name, d)
				}
			case !ok:
				t.Errorf("%s: no completion (cobra's default would offer file names)", name)
			case slices.Contains(enumerated, metavar):
				if vals, d := comp(c, nil, ""); len(vals) < 2 || d != cobra.ShellCompDirectiveNoFileComp {
					t.Errorf("%s: %s completes to %q (directive %d), want its values", name, metavar, vals, d)
				}
			default:
				if _, d := comp(c, nil, ""); d != cobra.ShellCompDirectiveNoFileComp {
					t.Errorf("%s: completes with directive %d, want no file names", name, d)
				}
			}
		}
	})
	for flag, want := range map[string]string{"output": "FILE", "pid": "PID", "tid": "TID", "format": "FORMAT", "duration": "D"} {
		if metavarOf[flag] != want {
			t.Errorf("--%s shows %q, want %q", flag, metavarOf[flag], want)
		}
	}
}

// shellWords splits an example as a shell would, up to the first pipe,
// redirection, && or comment: the command line profile gets.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case !inWord && strings.ContainsRune("|>&;#", r):
			return words
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

func TestShellWords(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"profile summary p.data --top 20", []string{"profile", "summary", "p.data", "--top", "20"}},
		{"profile diff a b --fail-on 'self>+10%&self>+5ms'", []string{"profile", "diff", "a", "b", "--fail-on", "self>+10%&self>+5ms"}},
		{`profile x --title "two words" | jq .`, []string{"profile", "x", "--title", "two words"}},
		{"profile x > out && echo", []string{"profile", "x"}},
		{"profile x '' y", []string{"profile", "x", "", "y"}},
	} {
		if got := shellWords(c.line); !slices.Equal(got, c.want) {
			t.Errorf("shellWords(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

// Every command's --help has examples, and every example is a command line
// profile accepts: the command it illustrates or one below it, known
// flags with values of their type, the right number of arguments, and for
// an enumerated flag one of its values.
func TestHelpExamples(t *testing.T) {
	var paths [][]string
	walk(newRootCmd(), func(c *cobra.Command) {
		paths = append(paths, strings.Fields(c.CommandPath())[1:])
	})
	if len(paths) < 15 {
		t.Fatalf("only %d commands: %q", len(paths), paths)
	}
	for _, path := range paths {
		c, _, err := newRootCmd().Find(path)
		if err != nil {
			t.Fatal(err)
		}
		name := c.CommandPath()
		if c.Example == "" {
			t.Errorf("%s: no Example", name)
			continue
		}
		lines := strings.Split(c.Example, "\n")
		if len(lines) > 4 {
			t.Errorf("%s: %d examples, want at most 4", name, len(lines))
		}
		for _, line := range lines {
			checkExample(t, c, line)
		}
		stdout, stderr, code := runRoot(append(path, "--help")...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "\nExamples:\n"+c.Example+"\n") {
			t.Errorf("%s --help: exit %d, stderr %q, no examples in\n%s", name, code, stderr, stdout)
		}
	}
}

// checkExample parses one example line of c's on a fresh command tree.
func checkExample(t *testing.T, c *cobra.Command, line string) {
	t.Helper()
	name := c.CommandPath()
	if !strings.HasPrefix(line, "  profile ") {
		t.Errorf("%s: example %q does not start with two spaces and profile", name, line)
		return
	}
	words := shellWords(line)
	ec, rest, err := newRootCmd().Find(words[1:])
	if err != nil {
		t.Errorf("%s: example %q: %v", name, line, err)
		return
	}
	if ec.CommandPath() != name && !strings.HasPrefix(ec.CommandPath(), name+" ") {
		t.Errorf("%s: example %q is of %s", name, line, ec.CommandPath())
		return
	}
	if err := ec.ParseFlags(rest); err != nil {
		t.Errorf("%s: example %q: %v", name, line, err)
		return
	}
	args := ec.Flags().Args()
	for _, check := range []func() error{
		func() error { return ec.ValidateArgs(args) },
		ec.ValidateRequiredFlags,
		ec.ValidateFlagGroups,
	} {
		if err := check(); err != nil {
			t.Errorf("%s: example %q: %v", name, line, err)
			return
		}
	}
	ec.Flags().Visit(func(f *pflag.Flag) {
		if vals, ok := choicesOf(ec, f); ok && !slices.Contains(vals, f.Value.String()) {
			t.Errorf("%s: example %q: --%s %s is none of %q", name, line, f.Name, f.Value, vals)
		}
	})
}

// choicesOf returns the values an enumerated flag of c completes to,
// without their descriptions; false for another flag.
func choicesOf(c *cobra.Command, f *pflag.Flag) ([]string, bool) {
	metavar, _ := pflag.UnquoteUsage(f)
	comp, ok := c.GetFlagCompletionFunc(f.Name)
	if !ok || !slices.Contains(enumerated, metavar) {
		return nil, false
	}
	vals, _ := comp(c, nil, "")
	for i, v := range vals {
		vals[i], _, _ = strings.Cut(v, "\t")
	}
	return vals, true
}
