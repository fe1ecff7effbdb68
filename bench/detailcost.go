package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/profile-dev/profile/model"
)

// The per-call rows: workload (a) under `profile record --probes inline`,
// plain and with every loop call selected for detail but none kept
// (detailHot, by --slow 1h and by --detail-if 'ret<0': every call returns
// a positive value), each with its size-0 run and the untraced runs,
// round-robin under one CPU setting, every other round in reverse order.
// The ratio to plain is taken in each round, from that round's runs, and
// its median reported: a virtual machine's speed can step up or down for
// minutes (a neighbour), which medians of each row's runs taken apart
// mix into the ratio. The same rounds time issue #13's
// context-filtered call outside its context: the loop's calls (rec,
// leaf) gated by a context that never opens (ctxSel), each let go by
// its entry stub.

// detailCost is the per-call comparison under one CPU setting.
type detailCost struct {
	calls                     int64
	untraced                  float64 // ns per call of the program itself
	plain, detail, cond       float64 // marginal ns per traced call
	plainSt, detailSt, condSt string  // ring stalls of the last runs
	// detailR and condR are detail's and cond's per-call figure ÷
	// plain's, each from one round's runs.
	detailR, condR []float64
	// outside is the marginal ns per call let go outside its context
	// (--context), per call of the loop.
	outside float64
}

// ctxSel gates the loop's functions (run's callees rec and leaf) by the
// context main>main, which never opens: main is not called inside main.
var ctxSel = []string{"--expand", "run", "--context", "main>main"}

// outsideRE reads --stats' count of calls let go outside the context.
var outsideRE = regexp.MustCompile(`calls outside it: +(\d+) let go`)

// detailGoal is issue #12's goal: --detail within 20% of plain.
const detailGoal = 1.20

// ratio is the median of per-round ratios rs and whether it meets the
// goal; n/a when a round's plain figure was lost in the noise (not above
// 0: no ratios).
func ratioOf(rs []float64) (string, string) {
	if len(rs) == 0 {
		return "n/a", "n/a (plain ≤ 0)"
	}
	r := median(rs)
	return ratio(r), metOrNot(r <= detailGoal)
}

// met says whether both --detail figures meet the goal.
func (dc detailCost) met() string {
	if len(dc.detailR) == 0 || len(dc.condR) == 0 {
		return "n/a (plain ≤ 0)"
	}
	return metOrNot(median(dc.detailR) <= detailGoal && median(dc.condR) <= detailGoal)
}

// spread lists per-round ratios rs in round order.
func spread(rs []float64) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%.2f", r))
	}
	return strings.Join(parts, ", ")
}

// detailCostJobs are the per-call rows' jobs under one setting. Keys:
// "untraced N|0", "plain N|0", "detail N|0", "cond N|0", "context N|0".
func detailCostJobs(c config, s setting) []job {
	bigN := strconv.Itoa(c.inlineN)
	untraced := func(key, size string) job {
		return job{key, func() (outcome, error) { return timed("", s.prefix, c.workload, size) }}
	}
	sel := []string{"--detail", detailHot, "--slow", "1h"}
	cond := []string{"--detail", detailHot, "--detail-if", "ret<0"}
	return []job{
		untraced("untraced N", bigN), untraced("untraced 0", "0"),
		detailRecordJob(c, s, "plain N", bigN, nil, tracedCalls), detailRecordJob(c, s, "plain 0", "0", nil, tracedCalls),
		detailRecordJob(c, s, "detail N", bigN, sel, noneKept), detailRecordJob(c, s, "detail 0", "0", sel, noneKept),
		detailRecordJob(c, s, "cond N", bigN, cond, noneKept), detailRecordJob(c, s, "cond 0", "0", cond, noneKept),
		detailRecordJob(c, s, "context N", bigN, ctxSel, letGo), detailRecordJob(c, s, "context 0", "0", ctxSel, letGo),
	}
}

func measureDetailCost(c config, s setting) (detailCost, error) {
	res := roundsEachWay(c.detailRuns, detailCostJobs(c, s))
	if err := res.required("untraced N", "untraced 0", "plain N", "plain 0", "detail N", "detail 0", "cond N", "cond 0", "context N", "context 0"); err != nil {
		return detailCost{}, err
	}
	calls := res.calls("plain N") - res.calls("plain 0")
	for _, k := range []string{"detail", "cond"} {
		if dcalls := res.calls(k+" N") - res.calls(k+" 0"); dcalls != calls {
			return detailCost{}, fmt.Errorf("plain runs traced %d calls, --detail (%s) runs %d", calls, k, dcalls)
		}
	}
	if out := res.calls("context N") - res.calls("context 0"); out != calls {
		return detailCost{}, fmt.Errorf("plain runs traced %d calls, --context runs let %d go", calls, out)
	}
	u, u0 := res.wall("untraced N"), res.wall("untraced 0")
	pl, dl, cl := res.last("plain N"), res.last("detail N"), res.last("cond N")
	detailR, condR := perRound(res, "detail", calls), perRound(res, "cond", calls)
	return detailCost{
		detailR:  detailR,
		condR:    condR,
		calls:    calls,
		untraced: float64(u-u0) / float64(max(calls, 1)),
		plain:    marginal(res.wall("plain N"), res.wall("plain 0"), u, u0, calls),
		detail:   marginal(res.wall("detail N"), res.wall("detail 0"), u, u0, calls),
		cond:     marginal(res.wall("cond N"), res.wall("cond 0"), u, u0, calls),
		outside:  marginal(res.wall("context N"), res.wall("context 0"), u, u0, calls),
		plainSt:  stalls(pl.stderr, pl.wall),
		detailSt: stalls(dl.stderr, dl.wall),
		condSt:   stalls(cl.stderr, cl.wall),
	}, nil
}

// perRound is row k's per-call figure ÷ plain's in each round, from that
// round's runs; a round whose plain figure is not above 0 gives none.
func perRound(res results, k string, calls int64) []float64 {
	var rs []float64
	for i := range res["plain N"].outs {
		at := func(key string) time.Duration { return res[key].outs[i].wall }
		u, u0 := at("untraced N"), at("untraced 0")
		p := marginal(at("plain N"), at("plain 0"), u, u0, calls)
		if p > 0 {
			rs = append(rs, marginal(at(k+" N"), at(k+" 0"), u, u0, calls)/p)
		}
	}
	return rs
}

// detailRecordJob times `profile record --probes inline --stats [sel]` of
// the workload at size; count reads the run's calls from the profile and
// --stats, checking it did what the row measures.
func detailRecordJob(c config, s setting, key, size string, sel []string, count func(*model.Profile, string) (int64, error)) job {
	data := filepath.Join(c.tmp, "detail-"+strings.ReplaceAll(key, " ", "-")+".data")
	return job{key, func() (outcome, error) {
		os.Remove(data) // else record keeps it as .old
		argv := append([]string{c.profile, "record", "--probes", "inline", "--no-compensate", "--sample=0", "--stats", "-o", data}, sel...)
		o, err := timed("", s.prefix, append(argv, "--", c.workload, size)...)
		if err != nil {
			return o, err
		}
		p, err := model.ReadFile(data)
		if err != nil {
			return o, err
		}
		if o.calls, err = count(p, o.stderr); err != nil {
			return o, fmt.Errorf("%s: %w", data, err)
		}
		return o, nil
	}}
}

// tracedCalls counts a plain run's calls.
func tracedCalls(p *model.Profile, _ string) (int64, error) { return p.Meta.TracedCalls, nil }

// noneKept counts a --detail run's calls, checking it recorded in detail
// and kept nothing: what it measures is the cost of calls not kept.
func noneKept(p *model.Profile, _ string) (int64, error) {
	if p.Meta.Detail == nil {
		return 0, fmt.Errorf("the profile has no detail rule")
	}
	if kept, _ := countTrees(p); kept != 0 {
		return 0, fmt.Errorf("%d trees kept, want none", kept)
	}
	return p.Meta.TracedCalls, nil
}

// letGo counts the calls a --context run let go outside its context.
func letGo(_ *model.Profile, stderr string) (int64, error) {
	m := outsideRE.FindStringSubmatch(stderr)
	if m == nil {
		return 0, fmt.Errorf("--stats shows no calls outside the context:\n%s", stderr)
	}
	return strconv.ParseInt(m[1], 10, 64)
}
