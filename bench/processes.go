package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/profile-dev/profile/model"
)

// Processes: what `profile record` costs a run that starts many
// processes (docs/benchmarks.md, Processes). Each new process is stopped
// while the tracer maps its rings, plans and patches its functions: a
// shell loop of short commands pays that at every command, a compiler at
// each of its passes (gcc's cc1 alone has some 26,000 functions, planned
// once a session, or read from the plan cache, patched in every
// process). Each workload runs untraced, recorded with the default
// probes (the plan cache warmed by a first run) and recorded without the
// plan cache, processRuns rounds, each way in turn, per CPU setting; the
// median wall times and their ratios.

const processRuns = 3

// planCacheEnv is the environment variable naming profile's plan cache
// ("off": none).
const planCacheEnv = "PROFILE_PLAN_CACHE"

type processRow struct {
	workload, setting        string
	untraced, traced, noPlan float64 // median wall seconds
	processes                int     // the processes the last traced run's profile holds
}

// processWorkloads are the commands measured: dir holds the file gcc
// compiles.
func processWorkloads(dir string) ([][2]string, error) {
	src := filepath.Join(dir, "small.c")
	if err := os.WriteFile(src, []byte("int twice(int x) { return 2 * x; }\nint main(void) { return twice(3) - 6; }\n"), 0o644); err != nil {
		return nil, err
	}
	gcc := "gcc -O2 -c -o small.o small.c"
	return [][2]string{
		{"a shell loop of 200 `/bin/true`", "for i in $(seq 200); do /bin/true; done"},
		{"`" + gcc + "` (a two-line file)", gcc},
		{"the same, three times in one shell", gcc + "; " + gcc + "; " + gcc},
	}, nil
}

func measureProcesses(c config) ([]processRow, error) {
	workloads, err := processWorkloads(c.tmp)
	if err != nil {
		return nil, err
	}
	var rows []processRow
	for _, s := range settings {
		for _, w := range workloads {
			fmt.Printf("processes, %s, %s:\n", w[0], s.name)
			out := filepath.Join(c.tmp, "processes.data")
			record := func(env ...string) (outcome, error) {
				args := append(append([]string{"env"}, env...), c.profile, "record", "-o", out, "--", "sh", "-c", w[1])
				return timed(c.tmp, s.prefix, args...)
			}
			js := []job{
				{"untraced", func() (outcome, error) { return timed(c.tmp, s.prefix, "sh", "-c", w[1]) }},
				{"traced", func() (outcome, error) { return record() }},
				{"no plan cache", func() (outcome, error) { return record(planCacheEnv + "=off") }},
			}
			if _, err := record(); err != nil { // the plan cache warmed
				return nil, err
			}
			res := roundsEachWay(processRuns, js)
			for _, k := range []string{"untraced", "traced", "no plan cache"} {
				if res[k].err != nil {
					return nil, res[k].err
				}
			}
			p, err := model.ReadFile(out)
			if err != nil {
				return nil, err
			}
			wall := func(k string) float64 {
				return float64(medianBy(res[k].outs, func(o outcome) int64 { return int64(o.wall) })) / 1e9
			}
			r := processRow{workload: w[0], setting: s.name, untraced: wall("untraced"), traced: wall("traced"), noPlan: wall("no plan cache"), processes: len(p.Processes)}
			fmt.Printf("  untraced %.3fs, recorded %.3fs: %.1fx, without the plan cache %.3fs: %.1fx (%d processes)\n",
				r.untraced, r.traced, r.traced/r.untraced, r.noPlan, r.noPlan/r.untraced, r.processes)
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// processesSection is the processes rows' part of the document.
func processesSection(rows []processRow, when string) section {
	var b strings.Builder
	fmt.Fprintf(&b, "Processes (%s): each workload run by `sh -c`, untraced, under `profile record` (default probes; the plan cache "+
		"warmed by a run before the rounds) and under `profile record` with `%s=off` (every module planned afresh), "+
		"%d rounds each way in turn per setting, median wall times; the ratios are recorded ÷ untraced.\n\n", when, planCacheEnv, processRuns)
	b.WriteString("| workload | setting | untraced | recorded | ratio | recorded, no plan cache | ratio | processes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %.3f s | %.3f s | %.1f× | %.3f s | %.1f× | %d |\n", r.workload, r.setting, r.untraced, r.traced, r.traced/r.untraced,
			r.noPlan, r.noPlan/r.untraced, r.processes)
	}
	b.WriteString("\n")
	return newSection("processes", b.String())
}
