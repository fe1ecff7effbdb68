package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The uftrace rows: `uftrace record -P .` patches the unmodified workload
// at run time; the second row records the same source built with -pg
// (mcount calls), which uftrace hooks without patching. Keys: "uftrace-P
// N|0", "uftrace-pg N|0".

// buildPG builds the workload's source with the testdata Makefile's flags
// plus -pg into the scratch directory; it returns the binary, or why not.
func buildPG(c config) (string, string) {
	testdata := filepath.Dir(filepath.Dir(c.workload)) // testdata/bin/recursion -> testdata
	dir := filepath.Join(c.tmp, "pg")
	bin := filepath.Join(dir, filepath.Base(c.workload))
	out, err := exec.Command("make", "-s", "-C", testdata, "BIN="+dir, "CFLAGS=-pg", bin).CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("-pg build failed: %v: %s", err, lastLine(string(out)))
	}
	return bin, ""
}

func uftraceJobs(c config, s setting) []job {
	if _, err := exec.LookPath("uftrace"); err != nil {
		return nil
	}
	bigN := strconv.Itoa(c.inlineN)
	plain := []string{"-P", ".", c.workload}
	js := []job{
		uftraceJob(c, s, "uftrace-P N", plain, bigN),
		uftraceJob(c, s, "uftrace-P 0", plain, "0"),
	}
	if c.pgBinary != "" {
		pg := []string{c.pgBinary}
		js = append(js, uftraceJob(c, s, "uftrace-pg N", pg, bigN), uftraceJob(c, s, "uftrace-pg 0", pg, "0"))
	}
	return js
}

// uftraceJob times `uftrace record [args] size` in the scratch directory
// (a -pg binary run outside uftrace would leave gmon.out there). The
// traced calls are counted once, by `uftrace report`, from the first run.
func uftraceJob(c config, s setting, key string, args []string, size string) job {
	data := filepath.Join(c.tmp, strings.ReplaceAll(key, " ", "-")+".uftrace")
	calls := int64(-1)
	return job{key, func() (outcome, error) {
		os.RemoveAll(data)
		defer os.RemoveAll(data)
		argv := append(append([]string{"uftrace", "record", "-d", data}, args...), size)
		o, err := timed(c.tmp, s.prefix, argv...)
		if err != nil {
			return o, err
		}
		if calls < 0 {
			if calls, err = uftraceCalls(data); err != nil {
				return o, err
			}
		}
		o.calls = calls
		return o, nil
	}}
}

// uftraceCalls sums the calls of every function in a uftrace data
// directory (kernel events such as linux:schedule are not calls).
func uftraceCalls(data string) (int64, error) {
	out, err := exec.Command("uftrace", "report", "-d", data, "-f", "call").Output()
	if err != nil {
		return 0, fmt.Errorf("uftrace report: %w", err)
	}
	var total int64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[1], "linux:") {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			total += n
		}
	}
	return total, nil
}

// uftraceRows fills the probes table's uftrace rows.
func uftraceRows(c config, res results, r settingResult) {
	u, u0 := res.wall("untraced N"), res.wall("untraced 0")
	row := func(key, prefix, missing string) {
		if missing != "" {
			r.rows[key] = overhead{na: missing}
			return
		}
		if ok, why := res.ok(prefix+" N", prefix+" 0"); !ok {
			r.rows[key] = overhead{na: why}
			return
		}
		calls := res.calls(prefix+" N") - res.calls(prefix+" 0")
		r.rows[key] = overhead{calls: calls, perCall: marginal(res.wall(prefix+" N"), res.wall(prefix+" 0"), u, u0, calls)}
	}
	missing := ""
	if _, err := exec.LookPath("uftrace"); err != nil {
		missing = "uftrace not installed"
	}
	row("uftrace -P", "uftrace-P", missing)
	if missing == "" && c.pgBinary == "" {
		missing = c.pgError
	}
	row("uftrace pg", "uftrace-pg", missing)
}
