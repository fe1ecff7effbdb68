package attach

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/profile-dev/profile/detail"
	"github.com/profile-dev/profile/model"
)

// Detail recording (--detail; seed 000) on testdata/src/requests.c: 1,000
// requests, 7 slow (20 ms) and 3 failing, each logged with its arguments
// and return value. Exactly those calls are kept, each with its ancestors
// (main, serve) and with the values the workload logged.
func TestDetailKeepsExactlyTheInterestingCalls(t *testing.T) {
	cases := []struct {
		name string
		rule func() detail.Rule
		log  string // the workload's log lines of the calls to keep
	}{
		{"slow", func() detail.Rule { return detail.Rule{SlowNs: 10e6, Limit: 1000} }, "slow"},
		{"ret<0", func() detail.Rule {
			c, err := detail.ParseCond("ret<0")
			if err != nil {
				t.Fatal(err)
			}
			return detail.Rule{If: &c, Limit: 1000}
		}, "fail"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachProbe(t, func(t *testing.T, opt Options) {
				opt.DetailFuncs = regexp.MustCompile("^handle_request$")
				opt.DetailRule = tc.rule()
				r, out := recordWorkload(t, "requests", opt)
				var want []string
				for _, line := range strings.Split(out, "\n") {
					if strings.HasPrefix(line, tc.log+" ") {
						want = append(want, strings.TrimPrefix(line, tc.log+" "))
					}
				}
				if n := map[string]int{"slow": 7, "fail": 3}[tc.log]; len(want) != n {
					t.Fatalf("the workload logged %d %s requests, want %d:\n%s", len(want), tc.log, n, out)
				}
				p := r.Profile
				if len(p.Threads) != 1 {
					t.Fatalf("%d threads, want 1", len(p.Threads))
				}
				th := p.Threads[0]
				var got []string
				for i, tr := range th.Trees {
					got = append(got, checkRequestTree(t, p, i, tr))
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("kept calls:\n%s\nwant (the workload's log):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if th.DroppedTrees != 0 {
					t.Errorf("%d trees dropped, want 0", th.DroppedTrees)
				}
				if p.Meta.Detail == nil || p.Meta.Detail.Funcs != "^handle_request$" {
					t.Errorf("rule in the profile: %+v", p.Meta.Detail)
				}
			})
		})
	}
}

// checkRequestTree checks tree i's shape (main > serve > handle_request,
// times nested) and returns its kept call as the workload logs it.
func checkRequestTree(t *testing.T, p *model.Profile, i int, tr model.DetailTree) string {
	t.Helper()
	var names []string
	for _, c := range tr.Calls {
		names = append(names, fmt.Sprintf("%s@%d", p.FuncName(c.Func), c.Depth))
	}
	if got := strings.Join(names, " "); got != "main@0 serve@1 handle_request@2" {
		t.Errorf("tree %d: %s, want main@0 serve@1 handle_request@2", i, got)
		return ""
	}
	for k := 1; k < len(tr.Calls); k++ {
		in, out := tr.Calls[k], tr.Calls[k-1]
		if in.StartNs < out.StartNs || in.EndNs > out.EndNs {
			t.Errorf("tree %d: %s [%d, %d] not within %s [%d, %d]", i, names[k], in.StartNs, in.EndNs, names[k-1], out.StartNs, out.EndNs)
		}
	}
	for _, c := range tr.Calls[:2] {
		if c.Flags != model.DetailReturned {
			t.Errorf("tree %d: ancestor flags %b, want returned only", i, c.Flags)
		}
	}
	c := tr.Calls[2]
	if want := model.DetailKept | model.DetailArgs | model.DetailReturned; c.Flags != want {
		t.Errorf("tree %d: handle_request flags %b, want %b", i, c.Flags, want)
	}
	if c.NArgs != 3 {
		t.Errorf("tree %d: handle_request takes %d argument registers, want 3 (from its debug information)", i, c.NArgs)
	}
	return fmt.Sprintf("id=%d size=%d flags=%d ret=%d", int32(c.Args[0]), int64(c.Args[1]), int32(c.Args[2]), int32(c.Ret))
}
