package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/profile-dev/profile/model"
)

// How close compensated times come to the truth: relations that hold on a
// quiet machine only, so they are measured here rather than asserted by
// the tests (docs/compensation.md).
//
//   - trap stops: trapcost's step (about 50 us a call, 10,000 calls)
//     traced alone by breakpoints, its compensated self time over its
//     self time traced alone by an inline probe, pairs of runs in turn;
//   - inline probes: the overhead workload's tiny function's self share
//     traced (inline, compensated) against the share the workload
//     measures itself untraced, for its sleep and busy shapes.

// accuracyPairs is the number of runs of each comparison per setting.
const accuracyPairs = 5

type accuracy struct {
	trapRatio           [][]float64 // per setting: trap ÷ inline, a pair each
	sleepGot, sleepWant [][]float64 // per setting: overhead sleep, traced and untraced shares
	busyGot, busyWant   [][]float64
}

func measureAccuracy(c config) (accuracy, error) {
	bin := filepath.Dir(c.workload)
	var a accuracy
	for _, s := range settings {
		fmt.Printf("accuracy, %s:\n", s.name)
		var tr, sg, sw, bg, bw []float64
		for i := range accuracyPairs {
			trap, err := selfOf(c, s, bin, "trap", "step", "", "--filter", "^trapcost:step$", "--", filepath.Join(bin, "trapcost"))
			if err != nil {
				return a, err
			}
			inline, err := selfOf(c, s, bin, "inline", "step", "", "--filter", "^trapcost:step$", "--", filepath.Join(bin, "trapcost"))
			if err != nil {
				return a, err
			}
			tr = append(tr, trap/inline)
			for _, sh := range []struct {
				args      []string
				scope     string
				got, want *[]float64
			}{
				{[]string{"sleep", "--rounds", "300"}, "sleepy", &sg, &sw},
				{[]string{"busy", "--rounds", "3"}, "with_calls", &bg, &bw},
			} {
				want, err := untracedShare(s, filepath.Join(bin, "overhead"), sh.args)
				if err != nil {
					return a, err
				}
				got, err := selfOf(c, s, bin, "inline", "work", sh.scope, append([]string{"--", filepath.Join(bin, "overhead")}, sh.args...)...)
				if err != nil {
					return a, err
				}
				*sh.got, *sh.want = append(*sh.got, got), append(*sh.want, want)
			}
			fmt.Printf("  pair %d: trap ÷ inline %.2f; sleep %.2f%% (untraced %.2f%%); busy %.2f%% (untraced %.2f%%)\n",
				i+1, tr[i], 100*sg[i], 100*sw[i], 100*bg[i], 100*bw[i])
		}
		a.trapRatio = append(a.trapRatio, tr)
		a.sleepGot, a.sleepWant = append(a.sleepGot, sg), append(a.sleepWant, sw)
		a.busyGot, a.busyWant = append(a.busyGot, bg), append(a.busyWant, bw)
	}
	return a, nil
}

// selfOf records args with probes and returns fn's self time summed over
// its nodes, or, with scope set, that over scope's total time.
func selfOf(c config, s setting, bin, probes, fn, scope string, args ...string) (float64, error) {
	out := filepath.Join(c.tmp, "accuracy.data")
	argv := append(append([]string{}, s.prefix...), c.profile, "record", "--probes", probes, "--sample=0", "-o", out)
	argv = append(argv, args...)
	if b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, b)
	}
	p, err := model.ReadFile(out)
	if err != nil {
		return 0, err
	}
	self, total := 0.0, 0.0
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			switch p.FuncName(n.Func) {
			case fn:
				self += float64(n.SelfNs)
			case scope:
				total += float64(n.TotalNs)
			}
		}
	}
	if scope == "" {
		return self, nil
	}
	if total == 0 {
		return 0, fmt.Errorf("%s: no time in %s", strings.Join(argv, " "), scope)
	}
	return self / total, nil
}

// untracedShare runs the overhead workload untraced: the share of work it
// measures itself.
func untracedShare(s setting, bin string, args []string) (float64, error) {
	argv := append(append(append([]string{}, s.prefix...), bin), args...)
	b, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	}
	var share float64
	if _, err := fmt.Sscanf(string(b), "share %f", &share); err != nil {
		return 0, fmt.Errorf("%s said %q: %v", strings.Join(argv, " "), b, err)
	}
	return share, nil
}

func accuracySection(a accuracy, when string) section {
	var b strings.Builder
	fmt.Fprintf(&b, "Compensation against the truth, %d pairs of runs per setting in turn (%s). "+
		"Trap stops: trapcost's `step` (about 50 µs a call, 10,000 calls) traced alone by breakpoints, its compensated "+
		"self time ÷ its self time traced alone by an inline probe (goal 0.8–1.2). Inline probes: the overhead "+
		"workload's `work` share traced (inline, compensated) against the share it measures itself untraced "+
		"(goal within 5 points).\n\n", accuracyPairs, when)
	b.WriteString("| setting | trap ÷ inline, median | pairs | sleep share traced, median | untraced | busy share traced, median | untraced |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for i, s := range settings {
		if i >= len(a.trapRatio) {
			break
		}
		pairs := make([]string, len(a.trapRatio[i]))
		for j, r := range a.trapRatio[i] {
			pairs[j] = fmt.Sprintf("%.2f", r)
		}
		fmt.Fprintf(&b, "| %s | %.2f | %s | %.2f%% | %.2f%% | %.1f%% | %.1f%% |\n", s.name, median(a.trapRatio[i]),
			strings.Join(pairs, ", "), 100*median(a.sleepGot[i]), 100*median(a.sleepWant[i]),
			100*median(a.busyGot[i]), 100*median(a.busyWant[i]))
	}
	b.WriteString("\n")
	return newSection("accuracy", b.String())
}
