package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/profile-dev/profile/model"
)

// Probe choice: what --probes auto costs against --probes inline on real
// programs, and which functions it gives no inline probe
// (docs/benchmarks.md, Probe choice). The Lua driver (every function of
// the interpreter) and vcall (virtual calls through forwarding functions)
// are recorded whole under both, autoRuns times each in turn per CPU
// setting; Debian's redis-server is attached under redis-benchmark, once
// under each, unpinned. auto's cost is its median time ÷ inline's (for
// redis: inline's GET requests/s ÷ auto's).

const (
	autoRuns  = 5
	vcallArgs = "1000000"
)

type autoRow struct {
	program, setting string
	auto, inline     float64 // medians: seconds, or requests/s (redis)
	probes           int     // functions given a probe by the auto run
	refused          []string
}

// cost is auto's cost over inline's: > 1 means auto is slower.
func (r autoRow) cost(perSecond bool) float64 {
	if perSecond {
		return r.inline / r.auto
	}
	return r.auto / r.inline
}

type autoResults struct {
	rows       []autoRow
	redis      *autoRow
	luaSkipped string
	redisWhy   string
}

// notInline reads a profile: how many functions got a probe, and those
// without an inline one ("name: why").
func notInline(path string) (int, []string, error) {
	p, err := model.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for _, f := range p.Functions {
		if f.Probe == model.ProbeInline || f.Probe == model.ProbeTrap {
			n++
		}
	}
	var out []string
	for _, r := range p.NotInline() {
		out = append(out, p.FuncName(r.Func)+": "+r.Note)
	}
	return n, out, nil
}

func measureAuto(c config) (autoResults, error) {
	var r autoResults
	lua, why := buildLua(c.tmp)
	script, err := filepath.Abs("testdata/lua/cpu.lua")
	if err != nil {
		return r, err
	}
	programs := []struct {
		name string
		argv []string
	}{{"vcall " + vcallArgs, []string{filepath.Join(filepath.Dir(c.workload), "vcall"), vcallArgs}}}
	if lua != "" {
		programs = append([]struct {
			name string
			argv []string
		}{{"Lua driver, cpu.lua " + fidelityRounds, []string{lua, script, fidelityRounds}}}, programs...)
	} else {
		r.luaSkipped = why
	}
	for _, s := range settings {
		for _, p := range programs {
			fmt.Printf("probe choice, %s, %s:\n", p.name, s.name)
			row := autoRow{program: p.name, setting: s.name}
			var js []job
			for _, kind := range []string{"auto", "inline"} {
				out := filepath.Join(c.tmp, "auto-"+kind+".data")
				argv := append([]string{c.profile, "record", "--probes", kind, "--sample=0", "-o", out, "--"}, p.argv...)
				js = append(js, job{kind, func() (outcome, error) { return timed(c.tmp, s.prefix, argv...) }})
			}
			res := roundsEachWay(autoRuns, js)
			for _, kind := range []string{"auto", "inline"} {
				if res[kind].err != nil {
					return r, res[kind].err
				}
			}
			row.auto = float64(medianBy(res["auto"].outs, func(o outcome) int64 { return int64(o.wall) })) / 1e9
			row.inline = float64(medianBy(res["inline"].outs, func(o outcome) int64 { return int64(o.wall) })) / 1e9
			if row.probes, row.refused, err = notInline(filepath.Join(c.tmp, "auto-auto.data")); err != nil {
				return r, err
			}
			fmt.Printf("  auto %.3fs, inline %.3fs: %.2fx; %d of %d functions without an inline probe: %s\n",
				row.auto, row.inline, row.cost(false), len(row.refused), row.probes, strings.Join(row.refused, "; "))
			r.rows = append(r.rows, row)
		}
	}
	r.redis, r.redisWhy, err = measureRedisAuto(c)
	return r, err
}

// measureRedisAuto attaches to redis-server under redis-benchmark with
// each probe choice in turn.
func measureRedisAuto(c config) (*autoRow, string, error) {
	s, why, err := startRedis(c.tmp, redisLayouts[0])
	if s == nil {
		return nil, why, err
	}
	defer s.stop()
	fmt.Println("probe choice, redis-server:")
	if _, err := s.benchmarks(redisWarmRuns); err != nil { // warm, as for fidelity
		return nil, "", err
	}
	row := &autoRow{program: "redis-server (attach)", setting: "unpinned"}
	for _, kind := range []string{"auto", "inline"} {
		out := filepath.Join(c.tmp, "redis-"+kind+".data")
		cmd := exec.Command(c.profile, "attach", "--pid", strconv.Itoa(s.cmd.Process.Pid), "--probes", kind, "--sample=0", "-o", out)
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			return nil, "", err
		}
		time.Sleep(2 * time.Second)
		rps, err := s.benchmark()
		cmd.Process.Signal(syscall.SIGINT)
		if werr := cmd.Wait(); werr != nil && err == nil {
			err = fmt.Errorf("profile attach: %w: %s", werr, lastLine(errb.String()))
		}
		if err != nil {
			return nil, "", err
		}
		if kind == "auto" {
			row.auto = rps["GET"]
			if row.probes, row.refused, err = notInline(out); err != nil {
				return nil, "", err
			}
		} else {
			row.inline = rps["GET"]
		}
	}
	fmt.Printf("  GET %.0f/s auto, %.0f/s inline: %.2fx; %d of %d functions without an inline probe: %s\n",
		row.auto, row.inline, row.cost(true), len(row.refused), row.probes, strings.Join(row.refused, "; "))
	return row, "", nil
}

func autoSection(a autoResults, when string) section {
	var b strings.Builder
	fmt.Fprintf(&b, "Probe choice (%s): the same program recorded under `--probes auto` and `--probes inline`, %d runs each "+
		"in turn per setting, median wall times; redis-server attached under redis-benchmark (GET requests/s, one run each, "+
		"unpinned). Cost: auto ÷ inline (goal at most 1.1). Without an inline probe: the functions the auto run's profile "+
		"lists so, as `profile info` does (goal at most 1 in 1,000), named with why.\n\n", when, autoRuns)
	b.WriteString("| program | setting | auto | inline | cost | without an inline probe | of functions | which, why |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	row := func(r autoRow, perSecond bool) {
		unit := func(v float64) string { return fmt.Sprintf("%.3f s", v) }
		if perSecond {
			unit = func(v float64) string { return fmt.Sprintf("%.0f GET/s", v) }
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f× | %d | %d | %s |\n", r.program, r.setting, unit(r.auto), unit(r.inline),
			r.cost(perSecond), len(r.refused), r.probes, strings.Join(r.refused, "; "))
	}
	for _, r := range a.rows {
		row(r, false)
	}
	if a.redis != nil {
		row(*a.redis, true)
	}
	if a.luaSkipped != "" {
		fmt.Fprintf(&b, "\nThe Lua driver was skipped: %s.\n", a.luaSkipped)
	}
	if a.redisWhy != "" {
		fmt.Fprintf(&b, "\nredis-server was skipped: %s.\n", a.redisWhy)
	}
	b.WriteString("\n")
	return newSection("auto", b.String())
}
