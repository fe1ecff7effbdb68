package names

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ianlancetaylor/demangle"

	"github.com/profile-dev/profile/internal/golden"
)

// readLines returns the lines of testdata/name that are neither blank nor
// "#" comments.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestGolden shortens real symbols (see the comments in the .txt files for
// where each comes from) demangled as instrument demangles them, and checks
// "full → short" per line against the .golden file. It also checks that
// ShortMangled, which demangles without parameters, agrees, and that Short
// is idempotent on each.
func TestGolden(t *testing.T) {
	for _, corpus := range []string{"cxx", "rust"} {
		t.Run(corpus, func(t *testing.T) {
			var out bytes.Buffer
			for _, sym := range readLines(t, corpus+".txt") {
				full, err := demangle.ToString(sym)
				if err != nil {
					t.Fatalf("%s: %v", sym, err)
				}
				short := Short(full)
				out.WriteString(full + " → " + short + "\n")
				if m, ok := ShortMangled(sym); !ok || m != short {
					t.Errorf("ShortMangled(%s) = %q, %v; Short of its demangled name is %q", sym, m, ok, short)
				}
				if again := Short(short); again != short {
					t.Errorf("Short(%q) = %q, not itself", short, again)
				}
			}
			golden.Check(t, corpus+".golden", out.Bytes())
		})
	}
}

func TestPlainNamesUnchanged(t *testing.T) {
	for _, name := range readLines(t, "plain.txt") {
		if got := Short(name); got != name {
			t.Errorf("Short(%q) = %q, want it unchanged", name, got)
		}
	}
}
