package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The live rows (profile top, issue #14): the profiler's own CPU time
// while it traces the rate workload (testdata/bin/rate: 2,000 ticks a
// second, 10,000 calls a second) for liveFor, as `profile attach` alone,
// as `profile top` drawing its screen every second on a terminal (script
// gives it one; TERM=screen, as under tmux), and as `profile top` piping
// a JSON line a second. Keys: "live attach|top screen|top json".

const liveFor = 5 * time.Second

func liveJobs(c config) []job {
	rate := filepath.Join(filepath.Dir(c.workload), "rate")
	cmds := []struct{ key, cmd string }{
		{"live attach", "%s attach --pid %d --duration %s -o %s"},
		{"live top screen", "script -qfec '%s top --pid %d --duration %s -o %s' /dev/null"},
		{"live top json", "%s top --pid %d --format json --duration %s -o %s"},
	}
	var js []job
	for _, x := range cmds {
		data := filepath.Join(c.tmp, strings.ReplaceAll(x.key, " ", "-")+".data")
		js = append(js, job{x.key, func() (outcome, error) {
			target := exec.Command(rate, "--hz", "2000", "--work", "20")
			if err := target.Start(); err != nil {
				return outcome{}, err
			}
			defer func() {
				target.Process.Kill()
				target.Wait()
			}()
			time.Sleep(300 * time.Millisecond)
			line := fmt.Sprintf(x.cmd, c.profile, target.Process.Pid, liveFor, data)
			cmd := exec.Command("sh", "-c", line+" >/dev/null")
			cmd.Env = append(os.Environ(), "TERM=screen")
			t0 := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return outcome{}, fmt.Errorf("%s: %v: %s", line, err, out)
			}
			return outcome{wall: time.Since(t0), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
		}})
	}
	return js
}

// liveTable is the live section of the document: the median CPU of each
// way of watching the process, and its ratio to attach alone.
func liveTable(c config, res results, when string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workload: `rate --hz 2000 --work 20` (10,000 traced calls/s), traced for %s by each command, "+
		"%d runs each in turn, medians of the profiler's CPU time (user + system, its children included), unpinned. %s.\n\n",
		liveFor, c.runs, when)
	b.WriteString("| command | profiler CPU | share of one CPU | vs attach alone |\n|---|---|---|---|\n")
	base := medianBy(res["live attach"].outs, func(o outcome) int64 { return int64(o.cpu) })
	for _, k := range []string{"live attach", "live top screen", "live top json"} {
		if ok, why := res.ok(k); !ok {
			fmt.Fprintf(&b, "| %s | n/a (%s) | | |\n", k, why)
			continue
		}
		cpu := time.Duration(medianBy(res[k].outs, func(o outcome) int64 { return int64(o.cpu) }))
		rel := "n/a"
		if base > 0 {
			rel = strconv.FormatFloat(float64(cpu)/float64(base), 'f', 2, 64) + "×"
		}
		fmt.Fprintf(&b, "| `profile %s` | %s | %.1f%% | %s |\n", strings.TrimPrefix(k, "live "),
			cpu.Round(time.Millisecond), 100*cpu.Seconds()/liveFor.Seconds(), rel)
	}
	return b.String()
}
