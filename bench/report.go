package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/profile-dev/profile/internal/hostinfo"
)

// overhead is one row of the probes table under one CPU setting.
type overhead struct {
	calls   int64   // traced calls the figure is divided by
	perCall float64 // marginal cost per traced call, ns
	na      string  // why there is no figure ("" if there is one)
}

// probeRow is a row of the probes table: its key in settingResult.rows,
// its label and the workload size it ran at.
type probeRow struct{ key, label, size string }

func probeRows(c config) []probeRow {
	n, bigN := fmt.Sprintf("`%d`", c.iterations), fmt.Sprintf("`%d`", c.inlineN)
	att := fmt.Sprintf("endless, attached %s and %s", c.attachShort, c.attachLong)
	return []probeRow{
		{"untraced", "untraced (time per call of the program itself)", bigN},
		{"record trap", "`profile record --probes trap`", n},
		{"record inline", "`profile record --probes inline`", bigN},
		{"record counted", "`profile record --counted .` (counting probes: no time)", bigN},
		{"attach inline", "`profile attach --probes inline`", att},
		{"attach trap", "`profile attach --probes trap`", att},
		{"ltrace", "`ltrace -L -x main@MAIN+run@MAIN+rec@MAIN+leaf@MAIN`", n},
		{"uftrace -P", "`uftrace record -P .` (same binary, patched at run time)", bigN},
		{"uftrace pg", "`uftrace record` of a `-pg` build of the same source", bigN},
	}
}

// us formats ns as microseconds.
func us(ns float64) string {
	switch {
	case math.Abs(ns) < 1e3:
		return fmt.Sprintf("%.3f µs", ns/1e3)
	case math.Abs(ns) < 10e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f µs", ns/1e3)
}

func ratio(x float64) string {
	if math.Abs(x) < 0.1 {
		return fmt.Sprintf("%.3f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

// probeTable is the table of every row, pinned and unpinned side by side,
// then the goals, the ring stalls and the reasons of n/a cells.
func probeTable(c config, rs []settingResult) string {
	var b strings.Builder
	b.WriteString("| measurement | iterations |")
	for _, s := range settings {
		fmt.Fprintf(&b, " %s: calls | per call | ÷ one bare stop |", s.name)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|---|---|", len(settings)) + "\n")
	reasons := map[string]bool{}
	for _, pr := range probeRows(c) {
		fmt.Fprintf(&b, "| %s | %s |", pr.label, pr.size)
		for i, r := range rs {
			o, ok := r.rows[pr.key]
			switch {
			case !ok:
				b.WriteString(" — | n/a | n/a |")
			case o.na != "":
				b.WriteString(" — | n/a | n/a |")
				reasons[fmt.Sprintf("%s, %s: %s", pr.label, settings[i].name, o.na)] = true
			case pr.key == "untraced":
				fmt.Fprintf(&b, " %d | %s | — |", o.calls, us(o.perCall))
			default:
				fmt.Fprintf(&b, " %d | %s | %s |", o.calls, us(o.perCall), ratio(o.perCall/float64(max(r.floor, 1))))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "| one bare ptrace stop (the floor) | %d int3s |", floorStops)
	for _, r := range rs {
		fmt.Fprintf(&b, " — | %s | 1× |", us(float64(r.floor)))
	}
	b.WriteString("\n\n")

	b.WriteString("| goal | " + strings.Join(settingNames(), " | ") + " |\n|---|" + strings.Repeat("---|", len(settings)) + "\n")
	for _, g := range []struct{ key, label string }{{"record inline", "`record`"}, {"attach inline", "`attach`"}} {
		fmt.Fprintf(&b, "| inline probes, %s: ≤ 0.5 µs per call |", g.label)
		for _, r := range rs {
			b.WriteString(" " + goal(r.rows[g.key], 500, func(o overhead) string { return us(o.perCall) }) + " |")
		}
		fmt.Fprintf(&b, "\n| inline probes, %s: within 2× of `uftrace record -P .` |", g.label)
		for _, r := range rs {
			u := r.rows["uftrace -P"]
			if u.na != "" || u.perCall <= 0 {
				b.WriteString(" n/a |")
				continue
			}
			b.WriteString(" " + goal(r.rows[g.key], 2*u.perCall, func(o overhead) string { return ratio(o.perCall / u.perCall) }) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")

	for i, r := range rs {
		for _, k := range []string{"record inline", "attach inline"} {
			if st := r.stalls[k]; st != "" {
				fmt.Fprintf(&b, "- ring stalls (`--stats`), %s, %s, last run: %s\n", k, settings[i].name, st)
			}
		}
	}
	var why []string
	for k := range reasons {
		why = append(why, k)
	}
	sort.Strings(why)
	for _, w := range why {
		fmt.Fprintf(&b, "- n/a: %s\n", w)
	}
	return b.String()
}

func goal(o overhead, limit float64, show func(overhead) string) string {
	if o.na != "" {
		return "n/a"
	}
	if o.perCall <= limit {
		return show(o) + ": met"
	}
	return show(o) + ": not met"
}

func settingNames() []string {
	var names []string
	for _, s := range settings {
		names = append(names, s.name)
	}
	return names
}

// A section is the text between a document's markers for one part of
// the bench ("<!-- name:begin -->" ... "<!-- name:end -->").
type section struct{ begin, end, text string }

func newSection(name, text string) section {
	b, e := markers(name)
	return section{b, e, text}
}

func markers(name string) (begin, end string) {
	return "<!-- " + name + ":begin -->", "<!-- " + name + ":end -->"
}

// checkSections says, before any measuring, whether the document at path
// can take the named sections: a run of many minutes should not end on a
// missing file or marker.
func checkSections(path string, names ...string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the document to update: %w", err)
	}
	for _, name := range names {
		b, e := markers(name)
		if _, _, err := between(path, string(doc), b, e); err != nil {
			return err
		}
	}
	return nil
}

// between finds markers begin and end in doc, read from path.
func between(path, doc, begin, end string) (i, j int, err error) {
	i, j = strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		return 0, 0, fmt.Errorf("%s: no %s ... %s markers", path, begin, end)
	}
	return i, j, nil
}

// update replaces the engine section (the trap table), the probes section
// (every row), the live and the detail sections of the document.
func update(c config, rs []settingResult, live results, det detailResults, loadStart, loadEnd string) error {
	when := whenLine(loadStart, loadEnd)
	var trap strings.Builder
	fmt.Fprintf(&trap, "Workload (a): `%s %d` (traced: main, run, rec, leaf and the default libc set), %d runs each, medians; "+
		"per-call figures are marginal: the same runs at size 0 are subtracted, so start-up and writing the profile do not count. %s.\n\n",
		filepath.Base(c.workload), c.iterations, c.runs, when)
	trap.WriteString("| setting | traced calls | untraced | `profile record --probes trap` | profile per call | `ltrace -L -x` per call | ltrace / profile | one bare stop | two stops (floor) | profile / floor |\n")
	trap.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range rs {
		trap.WriteString(trapRow(settings[i], r.trap) + "\n")
	}
	probes := fmt.Sprintf("Workload (a): `%s`, %d runs of each command, medians, every command in turn in each round. %s.\n\n",
		filepath.Base(c.workload), c.runs, when) + probeTable(c, rs)
	return writeSections(c.out, []section{
		newSection("engine", trap.String()),
		newSection("probes", probes),
		liveSection(c, live, when),
		detailSection(c, det, when),
	})
}

// whenLine says when, where and under which load a run measured.
func whenLine(loadStart, loadEnd string) string {
	return fmt.Sprintf("%s, host %s, %s; load average (1 min) %s at the start, %s at the end",
		time.Now().UTC().Format("2006-01-02"), hostName(), hostinfo.CPUModel(), loadStart, loadEnd)
}

// liveSection is the live rows' part of the document.
func liveSection(c config, live results, when string) section {
	return newSection("live", liveTable(c, live, when))
}

// writeSections replaces the text between each section's markers in the
// document at path.
func writeSections(path string, secs []section) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(doc)
	for _, sec := range secs {
		i, j, err := between(path, s, sec.begin, sec.end)
		if err != nil {
			return err
		}
		s = s[:i] + sec.begin + "\n" + sec.text + sec.end + s[j+len(sec.end):]
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

func hostName() string {
	h, _ := os.Hostname()
	return h
}

// loadAverage is the 1-minute load average.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
