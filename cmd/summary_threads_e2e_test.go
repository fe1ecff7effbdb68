package cmd_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/workload"
)

// summary --threads on a recording of demo: the thread numbers, the
// per-thread calls of every call edge and the "0→1" spawn relations are
// the ones render --threads draws, and the per-thread calls add up to the
// workload's exact counts.
func TestSummaryThreadsRecordedDemo(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, "demo.data", "demo")
	var s struct {
		Functions []struct {
			Name     string `json:"name"`
			Module   string `json:"module"`
			Calls    int64  `json:"calls"`
			ByThread []struct {
				Thread int   `json:"thread"`
				Calls  int64 `json:"calls"`
			} `json:"by_thread"`
		} `json:"functions"`
		Edges []struct {
			Caller       string `json:"caller"`
			Callee       string `json:"callee"`
			CallerModule string `json:"caller_module"`
			CalleeModule string `json:"callee_module"`
			Kind         string `json:"kind"`
			ByThread     []struct {
				Thread  int   `json:"thread"`
				Creator *int  `json:"creator"`
				Calls   int64 `json:"calls"`
			} `json:"by_thread"`
		} `json:"edges"`
		Threads []struct {
			Tid    int  `json:"tid"`
			Number *int `json:"number"`
		} `json:"threads"`
	}
	decodeSummary(t, dir, &s, "--threads", "demo.data")
	exp, err := workload.LoadExpected("demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Functions {
		want, ok := exp.Functions[f.Name]
		if f.Module != "demo" || !ok {
			continue
		}
		var sum int64
		for _, x := range f.ByThread {
			sum += x.Calls
		}
		if sum != int64(want.Calls) {
			t.Errorf("%s: calls by thread add up to %d, want %d", f.Name, sum, want.Calls)
		}
	}

	dot, stderr, code := run(t, dir, "render", "--threads", "--dot", "-o", "-", "demo.data")
	if code != 0 {
		t.Fatalf("render --threads: %s", stderr)
	}
	// the legend's "N = tid T (...)" against summary's numbers
	legend := regexp.MustCompile(`(\d+) = tid (\d+) `)
	drawn := map[int]int{}
	for _, m := range legend.FindAllStringSubmatch(dot, -1) {
		n, _ := strconv.Atoi(m[1])
		tid, _ := strconv.Atoi(m[2])
		drawn[tid] = n
	}
	if len(drawn) != len(s.Threads) || len(drawn) != 4 {
		t.Errorf("render legend threads %v, summary %d threads", drawn, len(s.Threads))
	}
	for _, th := range s.Threads {
		if th.Number == nil || drawn[th.Tid] != *th.Number {
			t.Errorf("tid %d: summary number %v, render %d", th.Tid, th.Number, drawn[th.Tid])
		}
	}

	// per-thread lines of the drawing's edges, thread-root levels folded
	names := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  (n\d+) \[label="(.*?)(?: \[L\d+\])?\\n`).FindAllStringSubmatch(dot, -1) {
		names[m[1]] = m[2]
	}
	fromDOT := map[string]int64{} // "caller>callee>thread" -> calls, "caller>callee>spawn>A→B" -> 1
	for _, m := range regexp.MustCompile(`(?m)^  (n\d+) -> (n\d+) \[label="(.*?)"`).FindAllStringSubmatch(dot, -1) {
		edge := names[m[1]] + ">" + names[m[2]]
		for _, line := range strings.Split(m[3], `\n`)[1:] {
			if th, rest, ok := strings.Cut(line, ": ("); ok {
				calls, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
				fromDOT[edge+">"+th] += calls
			} else if strings.Contains(line, "→") {
				fromDOT[edge+">spawn>"+line]++
			}
		}
	}
	fromSummary := map[string]int64{}
	for _, e := range s.Edges {
		edge := demoDisplay(e.Caller, e.CallerModule) + ">" + demoDisplay(e.Callee, e.CalleeModule)
		for _, x := range e.ByThread {
			if x.Creator != nil {
				fromSummary[fmt.Sprintf("%s>spawn>%d→%d", edge, *x.Creator, x.Thread)]++
				continue
			}
			fromSummary[fmt.Sprintf("%s>%d", edge, x.Thread)] += x.Calls
		}
	}
	if len(fromSummary) != len(fromDOT) {
		t.Errorf("summary has %d edge shares, render %d", len(fromSummary), len(fromDOT))
	}
	for k, v := range fromSummary {
		if fromDOT[k] != v {
			t.Errorf("%s: summary %d, render %d", k, v, fromDOT[k])
		}
	}
	for _, k := range []string{"start_workers>serve_loop>spawn>0→1", "start_workers>serve_loop>spawn>0→3"} {
		if fromSummary[k] != 1 {
			t.Errorf("no %s in %v", k, fromSummary)
		}
	}

	text, _, code := run(t, dir, "summary", "--threads", "demo.data")
	if code != 0 || !strings.Contains(text, "Edges by thread") || !strings.Contains(text, "│ 0→2 │") {
		t.Errorf("summary --threads table (exit %d):\n%s", code, text)
	}
	_, stderr, code = run(t, dir, "summary", "--threads", "--format", "csv", "demo.data")
	if code != 2 {
		t.Errorf("--threads with csv: exit %d, want 2", code)
	}
	oneLineError(t, stderr, code, "--threads: not available with --format csv")
}
