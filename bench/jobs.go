package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"
)

// outcome is one run of a job.
type outcome struct {
	wall   time.Duration // wall time of the command
	calls  int64         // traced calls the run counted (0 if none)
	durNs  int64         // attach: the profile's own duration
	cpu    time.Duration // user and system time of the command (and its children)
	stderr string
}

// job is one measurement: a command timed runs times.
type job struct {
	key string
	do  func() (outcome, error)
}

// series holds a job's outcomes, or the error that stopped it.
type series struct {
	outs []outcome
	err  error
}

type results map[string]*series

// rounds runs every job once per round, runs rounds: neighbouring runs of
// different rows see the same load. A job that fails is not run again.
func rounds(runs int, jobs []job) results { return runRounds(runs, jobs, false) }

// roundsEachWay is rounds with every other round run in reverse order, so
// that no row always runs first (or right after the same one).
func roundsEachWay(runs int, jobs []job) results { return runRounds(runs, jobs, true) }

func runRounds(runs int, jobs []job, eachWay bool) results {
	res := results{}
	for _, j := range jobs {
		res[j.key] = &series{}
	}
	for i := 0; i < runs; i++ {
		order := jobs
		if eachWay && i%2 == 1 {
			order = slices.Clone(jobs)
			slices.Reverse(order)
		}
		for _, j := range order {
			s := res[j.key]
			if s.err != nil {
				continue
			}
			o, err := j.do()
			if err != nil {
				fmt.Printf("  %-20s failed: %v\n", j.key, err)
				s.err = err
				continue
			}
			fmt.Printf("  %-20s %10s %10d calls", j.key, o.wall.Round(time.Microsecond), o.calls)
			if o.durNs != 0 {
				fmt.Printf(" %10s traced", time.Duration(o.durNs).Round(time.Microsecond))
			}
			fmt.Println()
			s.outs = append(s.outs, o)
		}
		fmt.Printf("  round %d/%d done\n", i+1, runs)
	}
	return res
}

// required fails on the first of keys whose job failed.
func (r results) required(keys ...string) error {
	for _, k := range keys {
		if s, ok := r[k]; !ok || s.err != nil || len(s.outs) == 0 {
			if ok && s.err != nil {
				return fmt.Errorf("%s: %w", k, s.err)
			}
			return fmt.Errorf("%s: no runs", k)
		}
	}
	return nil
}

// ok says whether every job of keys ran; else it gives the first error.
func (r results) ok(keys ...string) (bool, string) {
	for _, k := range keys {
		s := r[k]
		if s == nil {
			return false, "not run"
		}
		if s.err != nil {
			return false, s.err.Error()
		}
	}
	return true, ""
}

func (r results) wall(key string) time.Duration {
	return time.Duration(medianBy(r[key].outs, func(o outcome) int64 { return int64(o.wall) }))
}

func (r results) calls(key string) int64 {
	return medianBy(r[key].outs, func(o outcome) int64 { return o.calls })
}

func (r results) durNs(key string) int64 {
	return medianBy(r[key].outs, func(o outcome) int64 { return o.durNs })
}

// last is the job's last outcome.
func (r results) last(key string) outcome {
	outs := r[key].outs
	if len(outs) == 0 {
		return outcome{}
	}
	return outs[len(outs)-1]
}

// median is the middle of v (the upper one of an even count), 0 if empty.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func medianBy(outs []outcome, f func(outcome) int64) int64 {
	if len(outs) == 0 {
		return 0
	}
	v := make([]int64, len(outs))
	for i, o := range outs {
		v[i] = f(o)
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v[len(v)/2]
}

// timed runs a command in dir ("" for the current one) with stdout
// discarded and returns its wall time and stderr.
func timed(dir string, prefix []string, args ...string) (outcome, error) {
	argv := append(append([]string{}, prefix...), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return outcome{}, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, lastLine(errb.String()))
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return outcome{wall: wall, cpu: cpu, stderr: errb.String()}, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// marginal is the cost per traced call of a traced run over the untraced
// one: the size-0 runs are subtracted from both, so start-up and exit do
// not count.
func marginal(traced, traced0, untraced, untraced0 time.Duration, calls int64) float64 {
	return float64((traced-traced0)-(untraced-untraced0)) / float64(max(calls, 1))
}
