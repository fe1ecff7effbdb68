package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/profile-dev/profile/model"
)

// The detail rows (issue #12): what `--detail` costs on the calls it
// selects but does not keep, against plain inline probes, on workload (a)
// (detailcost.go), and whether the tracer's memory stays flat over a long
// run that keeps and drops trees (detailmem.go). Both go into the
// document between the detail markers.

// detailHot selects every call the workload makes in its loop (rec and
// leaf: 12 of 12 per iteration); with --slow 1h, or --detail-if 'ret<0',
// none is kept: each call is judged, its arguments held, and pruned, for
// nothing.
const detailHot = "^(rec|leaf)$"

// detailResults is everything the detail rows measured.
type detailResults struct {
	cost []detailCost // by settings
	mem  []memResult  // by memRuns
}

// measureDetail runs the per-call rows under each CPU setting, then the
// memory runs.
func measureDetail(c config) (detailResults, error) {
	var r detailResults
	for _, s := range settings {
		fmt.Printf("detail per call, %s:\n", s.name)
		dc, err := measureDetailCost(c, s)
		if err != nil {
			return r, fmt.Errorf("detail per call, %s: %w", s.name, err)
		}
		fmt.Printf("  plain %s, --detail --slow %s per call, --detail-if %s; outside its --context %s\n",
			us(dc.plain), us(dc.detail), us(dc.cond), us(dc.outside))
		fmt.Printf("  ÷ plain by round: --slow %s; --detail-if %s\n", spread(dc.detailR), spread(dc.condR))
		r.cost = append(r.cost, dc)
	}
	fmt.Printf("detail memory (%s runs):\n", c.detailFor)
	mem, err := measureMemory(c)
	if err != nil {
		return r, fmt.Errorf("detail memory: %w", err)
	}
	r.mem = mem
	return r, nil
}

// detailSection is the detail part of the document: both tables, their
// acceptance lines, and when and where they were measured.
func detailSection(c config, r detailResults, when string) section {
	var b strings.Builder
	fmt.Fprintf(&b, "Per call: workload (a), `%s %d`, `profile record --probes inline --no-compensate` "+
		"plain, with `--detail '%s' --slow 1h` and with `--detail '%[3]s' --detail-if 'ret<0'` "+
		"(every loop call selected, none kept: each returns a positive value), %[4]d rounds of one run each, "+
		"every other round in reverse order; per-call figures are medians of the marginal cost per traced call "+
		"(size 0 subtracted, as above), and each ratio is the median of the rounds' own ratios (detail ÷ plain "+
		"from the same round's runs, so that a step in the host's speed between rounds does not enter it). %s.\n\n",
		filepath.Base(c.workload), c.inlineN, detailHot, c.detailRuns, when)
	b.WriteString("| setting | traced calls | untraced per call | plain inline per call | `--slow 1h` per call | ÷ plain | `--detail-if ret<0` per call | ÷ plain | goal ≤ 1.20× |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for i, dc := range r.cost {
		rt, _ := ratioOf(dc.detailR)
		ct, _ := ratioOf(dc.condR)
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", settings[i].name, dc.calls,
			us(dc.untraced), us(dc.plain), us(dc.detail), rt, us(dc.cond), ct, dc.met())
	}
	b.WriteString("\n")
	for i, dc := range r.cost {
		fmt.Fprintf(&b, "- ÷ plain round by round, %s: `--slow 1h` %s; `--detail-if ret<0` %s\n",
			settings[i].name, spread(dc.detailR), spread(dc.condR))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "A call outside its calling context (issue #13, `--expand run --context 'main>main'`: the loop's rec and leaf "+
		"gated by a context that never opens, so each entry stub compares and returns), same runs, per call of the loop:\n\n")
	b.WriteString("| setting | untraced per call | plain inline per call | outside its context per call | ÷ plain |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for i, dc := range r.cost {
		rt := "n/a"
		if dc.plain > 0 {
			rt = ratio(dc.outside / dc.plain)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", settings[i].name, us(dc.untraced), us(dc.plain), us(dc.outside), rt)
	}
	b.WriteString("\n")
	for i, dc := range r.cost {
		fmt.Fprintf(&b, "- ring stalls (`--stats`), %s, last run: plain %s; `--slow 1h` %s; `--detail-if ret<0` %s\n",
			settings[i].name, orNA(dc.plainSt), orNA(dc.detailSt), orNA(dc.condSt))
	}
	b.WriteString("\n")
	b.WriteString(memTable(c, r.mem))
	return newSection("detail", b.String())
}

// countTrees sums the detail trees kept and dropped over a profile's
// threads.
func countTrees(p *model.Profile) (kept, dropped int64) {
	for _, t := range p.Threads {
		kept += int64(len(t.Trees))
		dropped += t.DroppedTrees
	}
	return kept, dropped
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// durLabel is a whole-second duration as "60 s".
func durLabel(d time.Duration) string {
	return fmt.Sprintf("%g s", d.Seconds())
}
