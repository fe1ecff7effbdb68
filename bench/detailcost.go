package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/profile-dev/profile/model"
)

// The per-call rows: workload (a) under `profile record --probes inline`,
// plain and with every loop call selected for detail but none kept
// (detailHot, --slow 1h), each with its size-0 run and the untraced runs,
// round-robin under one CPU setting. The same rounds time issue #13's
// context-filtered call outside its context: the loop's calls (rec,
// leaf) gated by a context that never opens (ctxSel), each let go by
// its entry stub.

// detailCost is the per-call comparison under one CPU setting.
type detailCost struct {
	calls             int64
	untraced          float64 // ns per call of the program itself
	plain, detail     float64 // marginal ns per traced call
	plainSt, detailSt string  // ring stalls of the last runs
	// outside is the marginal ns per call let go outside its context
	// (--context), per call of the loop.
	outside float64
}

// ctxSel gates the loop's functions (run's callees rec and leaf) by the
// context main>main, which never opens: main is not called inside main.
var ctxSel = []string{"--expand", "run", "--context", "main>main"}

// outsideRE reads --stats' count of calls let go outside the context.
var outsideRE = regexp.MustCompile(`calls outside it: +(\d+) let go`)

// ratio is detail ÷ plain and whether it meets issue #12's goal (within
// 20%); n/a when the plain figure is lost in the noise (not above 0).
func (dc detailCost) ratio() (string, string) {
	if dc.plain <= 0 {
		return "n/a", "n/a (plain ≤ 0)"
	}
	r := dc.detail / dc.plain
	return ratio(r), metOrNot(r <= 1.20)
}

// detailCostJobs are the per-call rows' jobs under one setting. Keys:
// "untraced N|0", "plain N|0", "detail N|0".
func detailCostJobs(c config, s setting) []job {
	bigN := strconv.Itoa(c.inlineN)
	untraced := func(key, size string) job {
		return job{key, func() (outcome, error) { return timed("", s.prefix, c.workload, size) }}
	}
	sel := []string{"--detail", detailHot, "--slow", "1h"}
	return []job{
		untraced("untraced N", bigN), untraced("untraced 0", "0"),
		detailRecordJob(c, s, "plain N", bigN, nil), detailRecordJob(c, s, "plain 0", "0", nil),
		detailRecordJob(c, s, "detail N", bigN, sel), detailRecordJob(c, s, "detail 0", "0", sel),
		detailRecordJob(c, s, "context N", bigN, ctxSel), detailRecordJob(c, s, "context 0", "0", ctxSel),
	}
}

func measureDetailCost(c config, s setting) (detailCost, error) {
	res := rounds(c.runs, detailCostJobs(c, s))
	if err := res.required("untraced N", "untraced 0", "plain N", "plain 0", "detail N", "detail 0", "context N", "context 0"); err != nil {
		return detailCost{}, err
	}
	calls := res.calls("plain N") - res.calls("plain 0")
	if dcalls := res.calls("detail N") - res.calls("detail 0"); dcalls != calls {
		return detailCost{}, fmt.Errorf("plain runs traced %d calls, --detail runs %d", calls, dcalls)
	}
	if out := res.calls("context N") - res.calls("context 0"); out != calls {
		return detailCost{}, fmt.Errorf("plain runs traced %d calls, --context runs let %d go", calls, out)
	}
	u, u0 := res.wall("untraced N"), res.wall("untraced 0")
	pl, dl := res.last("plain N"), res.last("detail N")
	return detailCost{
		calls:    calls,
		untraced: float64(u-u0) / float64(max(calls, 1)),
		plain:    marginal(res.wall("plain N"), res.wall("plain 0"), u, u0, calls),
		detail:   marginal(res.wall("detail N"), res.wall("detail 0"), u, u0, calls),
		outside:  marginal(res.wall("context N"), res.wall("context 0"), u, u0, calls),
		plainSt:  stalls(pl.stderr, pl.wall),
		detailSt: stalls(dl.stderr, dl.wall),
	}, nil
}

// detailRecordJob times `profile record --probes inline [sel]` of the
// workload at size. With sel it checks that the run did record in detail
// and kept nothing: what it measures is the cost of calls not kept. With
// ctxSel its calls are those the context let go.
func detailRecordJob(c config, s setting, key, size string, sel []string) job {
	data := filepath.Join(c.tmp, "detail-"+strings.ReplaceAll(key, " ", "-")+".data")
	return job{key, func() (outcome, error) {
		os.Remove(data) // else record keeps it as .old
		argv := append([]string{c.profile, "record", "--probes", "inline", "--no-compensate", "--stats", "-o", data}, sel...)
		o, err := timed("", s.prefix, append(argv, "--", c.workload, size)...)
		if err != nil {
			return o, err
		}
		p, err := model.ReadFile(data)
		if err != nil {
			return o, err
		}
		if strings.Join(sel, " ") == strings.Join(ctxSel, " ") {
			m := outsideRE.FindStringSubmatch(o.stderr)
			if m == nil {
				return o, fmt.Errorf("%s: --stats shows no calls outside the context:\n%s", data, o.stderr)
			}
			o.calls, _ = strconv.ParseInt(m[1], 10, 64)
			return o, nil
		}
		if sel != nil {
			if p.Meta.Detail == nil {
				return o, fmt.Errorf("%s: the profile has no detail rule", data)
			}
			if kept, _ := countTrees(p); kept != 0 {
				return o, fmt.Errorf("%s: %d trees kept, want none (--slow 1h)", data, kept)
			}
		}
		o.calls = p.Meta.TracedCalls
		return o, nil
	}}
}
