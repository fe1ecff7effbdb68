package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/profile-dev/profile/model"
)

// The attach rows: the workload runs a practically endless number of
// iterations; after attachDelay, `profile attach --duration D` traces it
// and detaches, and the target is killed. The profile gives the calls
// traced and the session's duration (attaching and detaching included).
// Done for two durations, the difference removes attaching, detaching and
// the calls traced meanwhile: (duration(long) − duration(short)) /
// (calls(long) − calls(short)) is the time per call while attached, and
// less the untraced time per call (the "untraced" row) it is the overhead.
// Keys: "attach inline|trap short|long".

// endless is the target's iteration count: days of work untraced.
const endless = "1000000000000"

func attachJobs(c config, s setting) []job {
	var js []job
	for _, probes := range []string{"inline", "trap"} {
		js = append(js,
			attachJob(c, s, "attach "+probes+" short", probes, c.attachShort),
			attachJob(c, s, "attach "+probes+" long", probes, c.attachLong))
	}
	return js
}

func attachJob(c config, s setting, key, probes string, d time.Duration) job {
	data := filepath.Join(c.tmp, "attach-"+probes+"-"+d.String()+".data")
	return job{key, func() (outcome, error) {
		os.Remove(data)
		argv := append(append([]string{}, s.prefix...), c.workload, endless)
		target := exec.Command(argv[0], argv[1:]...)
		if err := target.Start(); err != nil {
			return outcome{}, err
		}
		exited := make(chan error, 1)
		go func() { exited <- target.Wait() }()
		defer func() {
			target.Process.Kill()
			<-exited
		}()
		select {
		case err := <-exited:
			exited <- err
			return outcome{}, fmt.Errorf("target exited before attach: %v", err)
		case <-time.After(c.attachDelay):
		}
		o, err := timed("", s.prefix, c.profile, "attach", "--pid", strconv.Itoa(target.Process.Pid),
			"--probes", probes, "--no-compensate", "--sample=0", "--duration", d.String(), "--stats", "-o", data)
		if err != nil {
			return o, err
		}
		p, err := model.ReadFile(data)
		if err != nil {
			return o, err
		}
		o.calls, o.durNs = p.Meta.TracedCalls, p.Meta.DurationNs
		return o, nil
	}}
}

// attachRows fills the probes table's attach rows.
func attachRows(c config, res results, r settingResult) {
	untraced := r.rows["untraced"].perCall
	for _, probes := range []string{"inline", "trap"} {
		short, long := "attach "+probes+" short", "attach "+probes+" long"
		row := "attach " + probes
		if ok, why := res.ok(short, long); !ok {
			r.rows[row] = overhead{na: why}
			continue
		}
		calls := res.calls(long) - res.calls(short)
		dt := res.durNs(long) - res.durNs(short)
		r.rows[row] = overhead{calls: calls, perCall: float64(dt)/float64(max(calls, 1)) - untraced}
		last := res.last(long)
		if probes == "inline" {
			r.stalls[row] = stalls(last.stderr, time.Duration(last.durNs))
		}
	}
}
