package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/profile-dev/profile/model"
)

// Jobs of the untraced runs, `profile record` and ltrace. Keys: "untraced
// n|N|0", "trap n|0", "ltrace n|0", "inline N|0", "counted N|0"; n is -n (the trap
// table's size), N is -n-inline.
func recordJobs(c config, s setting) []job {
	n, bigN := strconv.Itoa(c.iterations), strconv.Itoa(c.inlineN)
	untraced := func(key, size string) job {
		return job{key, func() (outcome, error) { return timed("", s.prefix, c.workload, size) }}
	}
	js := []job{
		untraced("untraced 0", "0"),
		untraced("untraced n", n),
		untraced("untraced N", bigN),
		recordJob(c, s, "trap n", "trap", n),
		recordJob(c, s, "trap 0", "trap", "0"),
		recordJob(c, s, "inline N", "inline", bigN),
		recordJob(c, s, "inline 0", "inline", "0"),
		recordJob(c, s, "counted N", "inline", bigN, "--counted", "."),
		recordJob(c, s, "counted 0", "inline", "0", "--counted", "."),
	}
	if _, err := exec.LookPath("ltrace"); err == nil {
		lt := func(key, size string) job {
			return job{key, func() (outcome, error) {
				return timed("", s.prefix, "ltrace", "-L", "-o", "/dev/null",
					"-x", "main@MAIN+run@MAIN+rec@MAIN+leaf@MAIN", c.workload, size)
			}}
		}
		js = append(js, lt("ltrace n", n), lt("ltrace 0", "0"))
	}
	return js
}

// recordJob times `profile record --probes probes` (and flags) of the
// workload at size and reads the calls from the profile: timed, and
// counted (--counted) in the threads' arcs.
func recordJob(c config, s setting, key, probes, size string, flags ...string) job {
	data := filepath.Join(c.tmp, strings.ReplaceAll(key, " ", "-")+".data")
	return job{key, func() (outcome, error) {
		os.Remove(data)
		args := append([]string{c.profile, "record", "--probes", probes, "--no-compensate", "--sample=0", "--stats", "-o", data}, flags...)
		o, err := timed("", s.prefix, append(append(args, "--", c.workload), size)...)
		if err != nil {
			return o, err
		}
		p, err := model.ReadFile(data)
		if err != nil {
			return o, err
		}
		o.calls = p.Meta.TracedCalls
		for _, t := range p.Threads {
			for _, a := range t.Arcs {
				o.calls += a.Calls
			}
		}
		return o, nil
	}}
}

// trapResult is the trap table's row: `profile record --probes trap` and
// ltrace at size n (and 0), the floor.
type trapResult struct {
	untraced, profiled, ltraced    time.Duration
	untraced0, profiled0, ltraced0 time.Duration
	calls, calls0                  int64
	floor                          time.Duration // one bare stop, steady state
	ltraceOK                       bool
}

func trapFrom(res results, floor time.Duration) trapResult {
	r := trapResult{
		untraced: res.wall("untraced n"), untraced0: res.wall("untraced 0"),
		profiled: res.wall("trap n"), profiled0: res.wall("trap 0"),
		calls: res.calls("trap n"), calls0: res.calls("trap 0"),
		floor: floor,
	}
	if ok, _ := res.ok("ltrace n", "ltrace 0"); ok {
		r.ltraced, r.ltraced0, r.ltraceOK = res.wall("ltrace n"), res.wall("ltrace 0"), true
	}
	return r
}

// perCall is the marginal cost per traced call of a traced run.
func (r trapResult) perCall(traced, traced0 time.Duration) time.Duration {
	return time.Duration(marginal(traced, traced0, r.untraced, r.untraced0, r.calls-r.calls0))
}

// trapRow is the row of the trap table (the format of the earlier runs).
func trapRow(s setting, r trapResult) string {
	pc := r.perCall(r.profiled, r.profiled0)
	lt, ratio := "n/a", "n/a"
	if r.ltraceOK {
		ltPer := r.perCall(r.ltraced, r.ltraced0)
		lt = us(float64(ltPer))
		ratio = fmt.Sprintf("%.1f×", float64(ltPer)/float64(pc))
	}
	floor := 2 * r.floor
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.2f× |", s.name, r.calls,
		r.untraced.Round(time.Millisecond), r.profiled.Round(time.Millisecond), us(float64(pc)),
		lt, ratio, us(float64(r.floor)), us(float64(floor)), float64(pc)/float64(max(floor, 1)))
}

// recordRows fills the probes table's untraced, record and ltrace rows.
func recordRows(res results, r settingResult) {
	inlineCalls := res.calls("inline N") - res.calls("inline 0")
	u, u0 := res.wall("untraced N"), res.wall("untraced 0")
	r.rows["untraced"] = overhead{calls: inlineCalls, perCall: float64(u-u0) / float64(max(inlineCalls, 1))}
	t := r.trap
	r.rows["record trap"] = overhead{calls: t.calls - t.calls0, perCall: float64(t.perCall(t.profiled, t.profiled0))}
	r.rows["record inline"] = overhead{calls: inlineCalls,
		perCall: marginal(res.wall("inline N"), res.wall("inline 0"), u, u0, inlineCalls)}
	countedCalls := res.calls("counted N") - res.calls("counted 0")
	r.rows["record counted"] = overhead{calls: countedCalls,
		perCall: marginal(res.wall("counted N"), res.wall("counted 0"), u, u0, countedCalls)}
	last := res.last("inline N")
	r.stalls["record inline"] = stalls(last.stderr, last.wall)
	if _, installed := res["ltrace n"]; !installed {
		r.rows["ltrace"] = overhead{na: "ltrace not installed"}
	} else if ok, why := res.ok("ltrace n", "ltrace 0"); !ok {
		r.rows["ltrace"] = overhead{na: why}
	} else {
		r.rows["ltrace"] = overhead{calls: t.calls - t.calls0, perCall: float64(t.perCall(t.ltraced, t.ltraced0))}
	}
}

var stallRE = regexp.MustCompile(`ring stalls:\s+(\d+) \((\S+) waiting\)`)

// stalls is what `--stats` (in stderr) said of the ring stalls of a run
// that took total, with the share of total spent waiting.
func stalls(stderr string, total time.Duration) string {
	m := stallRE.FindStringSubmatch(stderr)
	if m == nil {
		return ""
	}
	d, err := time.ParseDuration(m[2])
	if err != nil || total == 0 {
		return fmt.Sprintf("%s stalls, %s waiting", m[1], m[2])
	}
	return fmt.Sprintf("%s stalls, %s waiting of %s (%.0f%%)", m[1], d.Round(time.Millisecond),
		total.Round(time.Millisecond), 100*float64(d)/float64(total))
}
