package cmd_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// treesDoc is profile trees --format json as docs/trees.md describes it
// (the fields this test reads).
type treesDoc struct {
	Format  string `json:"format"`
	Threads []struct {
		Tid   int `json:"tid"`
		Trees []struct {
			Calls []struct {
				Name     string  `json:"name"`
				Depth    int     `json:"depth"`
				Kept     bool    `json:"kept"`
				Returned bool    `json:"returned"`
				Args     []int32 `json:"args"`
				Ret      int32   `json:"ret"`
			} `json:"calls"`
		} `json:"trees"`
	} `json:"threads"`
}

func treesJSON(t *testing.T, dir string, args ...string) treesDoc {
	t.Helper()
	out, stderr, code := run(t, dir, append([]string{"trees", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("trees %v: exit %d: %s", args, code, stderr)
	}
	var doc treesDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("trees %v: %v\n%s", args, err, out)
	}
	return doc
}

// maskTrees takes the run's facts out of profile trees' text: the thread
// and process ids, and the starts and durations (the columns before "|",
// whose widths follow them); "*" and "≥" stay.
func maskTrees(text string) string {
	ids := regexp.MustCompile(`^thread \d+ (\S+) \(pid \d+\)`)
	times := regexp.MustCompile(`\d+(\.\d+)? (ns|µs|ms| s)`)
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		line = ids.ReplaceAllString(line, "thread TID $1 (pid PID)")
		if left, right, ok := strings.Cut(line, " | "); ok {
			line = strings.Join(strings.Fields(times.ReplaceAllString(left, "T")), " ") + " | " + right
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}

// The requests workload recorded with --detail 'handle_request|lookup'
// --slow 40ms: profile trees shows the 7 slow requests (lookup sleeps 50
// ms) under main and serve, with the arguments and return values the
// workload logs, the same under both probe kinds.
func TestTreesRequests(t *testing.T) {
	dir := t.TempDir()
	slow := regexp.MustCompile(`(?m)^slow id=(\d+) size=(\d+) flags=(\d+) ret=(-?\d+)$`)
	var texts []string
	for _, probes := range []string{"inline", "trap"} {
		file := probes + ".data"
		var log string
		var doc treesDoc
		// A loaded machine can stretch a fast request past 40ms: up to 3
		// runs for the 7 slow ones alone.
		for attempt := 1; ; attempt++ {
			stdout, stderr, code := run(t, dir, "record", "--probes", probes, "--detail", "handle_request|lookup",
				"--slow", "40ms", "-o", file, "--", wl(t, "requests"))
			if code != 0 {
				t.Fatalf("record --probes %s: exit %d: %s", probes, code, stderr)
			}
			log, doc = stdout, treesJSON(t, dir, file)
			if len(doc.Threads) == 1 && len(doc.Threads[0].Trees) == 7 || attempt == 3 {
				break
			}
		}
		want := slow.FindAllStringSubmatch(log, -1)
		if doc.Format != "profile-trees/1" || len(doc.Threads) != 1 || len(doc.Threads[0].Trees) != 7 || len(want) != 7 {
			t.Fatalf("--probes %s: %d slow requests logged, trees %+v", probes, len(want), doc)
		}
		for i, tr := range doc.Threads[0].Trees {
			num := func(s string) int32 { n, _ := strconv.Atoi(s); return int32(n) }
			id, size, flags, ret := num(want[i][1]), num(want[i][2]), num(want[i][3]), num(want[i][4])
			c := tr.Calls
			if len(c) != 4 || c[0].Name != "main" || c[1].Name != "serve" || c[0].Kept || c[1].Kept ||
				c[2].Name != "handle_request" || c[2].Depth != 2 || !c[2].Kept || !c[2].Returned ||
				!slices.Equal(c[2].Args, []int32{id, size, flags}) || c[2].Ret != ret ||
				c[3].Name != "lookup" || c[3].Depth != 3 || !c[3].Kept ||
				!slices.Equal(c[3].Args, []int32{id}) || c[3].Ret != 3*id {
				t.Errorf("--probes %s: tree %d for %q: %+v", probes, i, want[i][0], c)
			}
		}
		out, stderr, code := run(t, dir, "trees", file)
		if code != 0 {
			t.Fatalf("trees %s: exit %d: %s", file, code, stderr)
		}
		texts = append(texts, maskTrees(out))

		// --tid of the one thread, --min below the 50ms sleeps: the same.
		tid := strconv.Itoa(doc.Threads[0].Tid)
		if again, _, _ := run(t, dir, "trees", file, "--tid", tid, "--min", "45ms"); again != out {
			t.Errorf("trees --tid %s --min 45ms:\n%s\nwant\n%s", tid, again, out)
		}
	}
	golden.Check(t, "trees-requests.txt", []byte(texts[0]))
	if texts[1] != texts[0] {
		t.Errorf("--probes trap:\n%s\n--probes inline:\n%s", texts[1], texts[0])
	}

	// Nothing at least 1s: said, exit 0; an unknown thread: exit 1.
	out, stderr, code := run(t, dir, "trees", "inline.data", "--min", "1s")
	if code != 0 || out != "no detail trees whose kept call lasted at least 1s (7 shorter)\n" || stderr != "" {
		t.Errorf("trees --min 1s: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	_, stderr, code = run(t, dir, "trees", "inline.data", "--tid", "1")
	oneLineError(t, stderr, code, "no thread 1 in the profile")
}

// A profile recorded without --detail has no trees to show: exit 1 with
// one line saying how to get them.
func TestTreesWithoutDetail(t *testing.T) {
	dir := t.TempDir()
	if err := model.WriteFile(filepath.Join(dir, "p.data"), modeltest.Sample()); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		out, stderr, code := run(t, dir, "trees", "p.data", "--format", format)
		if code != 1 || out != "" {
			t.Errorf("--format %s: exit %d, stdout %q", format, code, out)
		}
		oneLineError(t, stderr, code, "p.data: no detail trees: record with --detail REGEX")
	}
}
