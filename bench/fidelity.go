package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// Fidelity: how close the profile's self-time shares of a program's own
// functions come to perf sampling the same program untraced
// (docs/benchmarks.md, Fidelity). The program is the Lua interpreter
// linked from Debian's liblua5.4.a (testdata/src/luadriver.c) running
// testdata/lua/cpu.lua, every function of its executable traced. Each perf
// sample goes to the innermost non-inlined frame in the executable
// (samples with none, such as the dynamic linker's start-up, are left
// out); the profile's busy self time of each function of the executable
// is its share. The distance between two sets of shares is the total
// variation distance in points: half the sum of the absolute differences.

// fidelityRounds is cpu.lua's rounds traced with measured times (some
// 0.2 s untraced, 15-35 times that traced); fidelityDefaultRounds those
// traced with the default probes, sampled (some 3.6 s untraced: some
// 14,000 samples of the program, the set-up's half second a small part
// of the cost). perf samples fidelityPerfRounds (the same mix of work,
// each round alike) at perfHz: some 16,000 samples a run. Both draw
// shares from samples, so both carry sampling noise into the distance:
// at 120 rounds a run the floor (perf against perf) was 4-7 points and
// the default profile's distance moved by as much from run to run.
const (
	fidelityRounds        = "12"
	fidelityDefaultRounds = "240"
	fidelityPerfRounds    = "240"
	perfHz                = "3999"
)

type fidelity struct {
	setting          string
	perfN            [2]int        // samples of the two perf runs given to the executable's functions
	floor, raw, comp float64       // perf vs perf; the profile (--no-compensate, default) vs perf
	sampled          float64       // the profile with the default probes (sampled) vs perf
	untraced, traced time.Duration // fidelityRounds untraced, and traced with measured times
	untracedLong     time.Duration // fidelityDefaultRounds untraced
	sampledWall      time.Duration // fidelityDefaultRounds traced with the default probes
	rows             []fidelityRow // functions with at least 1% of perf's first run or of the profile's
}

type fidelityRow struct {
	name                            string
	perf, perf2, raw, comp, sampled float64
	perfCPU                         float64 // perf's first run with the samples inside waiting calls kept: the default profile's reference
	// waitingOut is the default profile with the time inside waiting
	// calls left out, against perf (redis only).
	waitingOut float64
}

// buildLua builds the Lua driver in dir; "" and why when it cannot.
func buildLua(dir string) (string, string) {
	if _, err := os.Stat("/usr/include/lua5.4/lua.h"); err != nil {
		return "", "liblua5.4-dev is not installed"
	}
	if _, err := exec.LookPath("perf"); err != nil {
		return "", "perf (Debian linux-perf) is not installed"
	}
	bin := filepath.Join(dir, "luadriver")
	out, err := exec.Command("gcc", "-O2", "-g", "-I/usr/include/lua5.4", "-o", bin, "testdata/src/luadriver.c",
		"/usr/lib/x86_64-linux-gnu/liblua5.4.a", "-lm", "-ldl").CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("build luadriver: %v: %s", err, lastLine(string(out)))
	}
	return bin, ""
}

// fidelityResults: the Lua rows per setting and the redis row, unpinned
// and pinned (redisLayouts); a skipped part says why.
type fidelityResults struct {
	lua                      []fidelity
	redis, redisPinned       *redisFidelity
	luaSkipped, redisSkipped string
	redisPinnedSkipped       string
}

func measureFidelity(c config) (fidelityResults, error) {
	var r fidelityResults
	var err error
	if r.lua, r.luaSkipped, err = measureLuaFidelity(c); err != nil {
		return r, err
	}
	if r.redis, r.redisSkipped, err = measureRedisFidelity(c, redisLayouts[0]); err != nil || r.redis == nil {
		return r, err
	}
	r.redisPinned, r.redisPinnedSkipped, err = measureRedisFidelity(c, redisLayouts[1])
	return r, err
}

func measureLuaFidelity(c config) ([]fidelity, string, error) {
	lua, why := buildLua(c.tmp)
	if lua == "" {
		fmt.Printf("fidelity: skipped: %s\n", why)
		return nil, why, nil
	}
	script, err := filepath.Abs("testdata/lua/cpu.lua")
	if err != nil {
		return nil, "", err
	}
	argv := []string{lua, script, fidelityRounds}
	long := []string{lua, script, fidelityDefaultRounds}
	var out []fidelity
	for _, s := range settings {
		fmt.Printf("fidelity, %s:\n", s.name)
		f := fidelity{setting: s.name}
		var err error
		if f.untraced, err = untracedWall(c, s, argv); err != nil {
			return nil, "", err
		}
		if f.untracedLong, err = untracedWall(c, s, long); err != nil {
			return nil, "", err
		}
		perfArgv := []string{lua, script, fidelityPerfRounds}
		p1, p1CPU, n1, err := perfShares(c, s, lua, perfArgv)
		if err != nil {
			return nil, "", err
		}
		p2, _, n2, err := perfShares(c, s, lua, perfArgv)
		if err != nil {
			return nil, "", err
		}
		f.perfN = [2]int{n1, n2}
		raw, _, err := profileShares(c, s, lua, []string{"--no-compensate", "--sample=0"}, argv)
		if err != nil {
			return nil, "", err
		}
		comp, wall, err := profileShares(c, s, lua, []string{"--sample=0"}, argv)
		if err != nil {
			return nil, "", err
		}
		sampled, swall, err := profileShares(c, s, lua, nil, long)
		if err != nil {
			return nil, "", err
		}
		f.traced, f.sampledWall = wall, swall
		f.floor, f.raw, f.comp, f.sampled = tvd(p1, p2), tvd(raw, p1), tvd(comp, p1), tvd(sampled, p1CPU)
		f.rows = shareRows(p1, p2, raw, comp, sampled, p1CPU)
		fmt.Printf("  distance: perf vs perf %.1f points, raw %.1f, compensated %.1f, default (sampled) %.1f; traced %.2fx untraced, default %.2fx\n",
			f.floor, f.raw, f.comp, f.sampled, float64(f.traced)/float64(f.untraced), float64(f.sampledWall)/float64(f.untracedLong))
		fmt.Printf("  default profile, functions with at least 1%% of perf's samples: %s (%s)\n", offByTwo(f.rows), perfSpread(f.rows))
		out = append(out, f)
	}
	return out, "", nil
}

// shareRows are the functions with at least 1% in any of the shares,
// perf's first run's largest first.
func shareRows(p1, p2, raw, comp, sampled, p1CPU map[string]float64) []fidelityRow {
	var rows []fidelityRow
	seen := map[string]bool{}
	for _, m := range []map[string]float64{p1, raw, comp, sampled, p1CPU} {
		for name, v := range m {
			if v >= 0.01 && !seen[name] {
				seen[name] = true
				rows = append(rows, fidelityRow{name: name, perf: p1[name], perf2: p2[name], raw: raw[name], comp: comp[name], sampled: sampled[name], perfCPU: p1CPU[name]})
			}
		}
	}
	slices.SortFunc(rows, func(a, b fidelityRow) int {
		if a.perf != b.perf {
			if a.perf > b.perf {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return rows
}

// perfRecord is the perf command that samples target (a command, or "-p
// PID") into data, prefixed by prefix (the CPU setting).
func perfRecord(prefix []string, data string, target ...string) []string {
	event := "cpu-clock:u"
	if os.Geteuid() == 0 {
		event = "cpu-clock" // kernel time inside the program's system calls counts too
	}
	argv := append(append([]string{}, prefix...), "perf", "record", "-q", "-F", perfHz, "-e", event,
		"--call-graph", "dwarf,16384", "-o", data)
	return append(argv, target...)
}

// perfShares samples argv untraced with perf and gives each sample to the
// innermost frame in exe: each function's share of those samples (busy,
// then on CPU: perfScriptShares).
func perfShares(c config, s setting, exe string, argv []string) (busy, onCPU map[string]float64, n int, err error) {
	data := filepath.Join(c.tmp, "perf.data")
	rec := perfRecord(s.prefix, data, append([]string{"--"}, argv...)...)
	cmd := exec.Command(rec[0], rec[1:]...)
	cmd.Dir = c.tmp
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %v: %s", strings.Join(rec, " "), err, lastLine(string(b)))
	}
	if busy, n, err = perfScriptShares(c, data, exe, true); err != nil {
		return nil, nil, 0, err
	}
	onCPU, _, err = perfScriptShares(c, data, exe, false)
	return busy, onCPU, n, err
}

// perfScriptShares reads perf's data: each function of exe's share of the
// samples given to exe's functions, and their number. With busy, samples
// inside a waiting call are left out, as the profile's measured busy time
// leaves it out; without, they stay, as sampled busy time keeps a thread's
// time on a CPU inside one (the kernel copying its data).
func perfScriptShares(c config, data, exe string, busy bool) (map[string]float64, int, error) {
	sc := exec.Command("perf", "script", "-i", data, "-F", "tid,ip,sym,dso", "--no-inline")
	sc.Dir = c.tmp
	stdout, err := sc.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	if err := sc.Start(); err != nil {
		return nil, 0, err
	}
	// perf names libc's internal aliases: __GI___libc_write is write.
	waiting := func(sym string) bool { return model.IsWaitingCall(strings.TrimPrefix(sym, "__GI_")) }
	if !busy {
		waiting = nil
	}
	counts, n := innermostIn(stdout, exe, waiting)
	if err := sc.Wait(); err != nil {
		return nil, 0, fmt.Errorf("perf script: %w", err)
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("perf: no sample in %s", exe)
	}
	shares := map[string]float64{}
	for k, v := range counts {
		shares[k] = float64(v) / float64(n)
	}
	return shares, n, nil
}

// innermostIn reads perf script's samples (a header line, then one frame
// a line, innermost first, "addr sym (dso)", a blank line after each) and
// counts each sample for its innermost frame whose dso is exe and that has
// a symbol; a sample with a frame inside it that waiting (if not nil)
// names is left out.
func innermostIn(r io.Reader, exe string, waiting func(sym string) bool) (map[string]int, int) {
	counts := map[string]int{}
	n := 0
	found, inSample := false, false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			inSample, found = false, false
			continue
		}
		if !inSample {
			inSample = true // the header
			continue
		}
		if found {
			continue
		}
		open, close := strings.LastIndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(line[:open])
		if len(f) < 2 {
			continue
		}
		if line[open+1:close] != exe {
			if waiting != nil && waiting(f[1]) {
				found = true // inside a waiting call: not busy time
			}
			continue
		}
		if f[1] == "[unknown]" || strings.HasSuffix(f[1], "@plt") {
			// Code of exe without a symbol (a static function of a binary
			// with only dynamic symbols, a PLT entry perf names after the
			// function it leads to): the profile cannot trace it either,
			// and gives its time to the traced function around it.
			continue
		}
		found = true
		counts[f[1]]++
		n++
	}
	return counts, n
}

// profileShares records argv with profile (default probes, with flag if
// not ""): each of exe's functions' share of the busy self time of exe's
// functions, and the traced run's wall time.
func profileShares(c config, s setting, exe string, flags, argv []string) (map[string]float64, time.Duration, error) {
	out := filepath.Join(c.tmp, "fidelity.data")
	args := append([]string{c.profile, "record", "-o", out}, flags...)
	o, err := timed(c.tmp, s.prefix, append(append(args, "--"), argv...)...)
	if err != nil {
		return nil, 0, err
	}
	shares, err := readShares(out, exe)
	return shares, o.wall, err
}

// untracedWall is the median wall time of three untraced runs of argv.
func untracedWall(c config, s setting, argv []string) (time.Duration, error) {
	var walls []float64
	for range 3 {
		o, err := timed(c.tmp, s.prefix, argv...)
		if err != nil {
			return 0, err
		}
		walls = append(walls, float64(o.wall))
	}
	return time.Duration(median(walls)), nil
}

// readShares is busyShares of the profile in file out for exe's module.
func readShares(out, exe string) (map[string]float64, error) {
	p, err := model.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return busyShares(p.Busy(), filepath.Base(exe)), nil
}

// sharesWaitingOut is busyShares of p for exe's module with the self time
// inside waiting calls left out, as perf's busy shares leave out the
// samples inside them (the method; a sampled profile keeps a
// waiting call's CPU time).
func sharesWaitingOut(p *model.Profile, exe string) map[string]float64 {
	b := p.Busy()
	leaveWaitingOut(b)
	return busyShares(b, filepath.Base(exe))
}

// leaveWaitingOut zeroes the self time of every context inside a waiting
// call (parents precede children in a thread's nodes).
func leaveWaitingOut(p *model.Profile) {
	waiting := p.WaitingFuncs()
	for i := range p.Threads {
		nodes := slices.Clone(p.Threads[i].Nodes)
		in := make([]bool, len(nodes))
		for k := range nodes {
			if par := nodes[k].Parent; par >= 0 && par < k {
				in[k] = in[par]
			}
			in[k] = in[k] || waiting[nodes[k].Func]
			if in[k] {
				nodes[k].SelfNs = 0
			}
		}
		p.Threads[i].Nodes = nodes
	}
}

// busyShares is each function of module base's share of the busy self
// time given to the module, over every thread. As perf's samples go to
// their innermost frame in the module, a node of another module (libc's
// write, traced) gives its self time to its nearest ancestor in the
// module; time with no such ancestor is left out.
func busyShares(p *model.Profile, base string) map[string]float64 {
	self := map[string]float64{}
	total := 0.0
	inModule := func(f int) bool {
		if f < 0 || f >= len(p.Functions) {
			return false
		}
		m := p.Functions[f].Module
		return m > 0 && filepath.Base(p.Modules[m].Path) == base
	}
	for _, th := range p.Threads {
		for _, n := range th.Nodes {
			i := n.Func
			for at := n; !inModule(at.Func); {
				if at.Parent < 0 || at.Parent >= len(th.Nodes) {
					i = -1
					break
				}
				at = th.Nodes[at.Parent]
				i = at.Func
			}
			if i < 0 || n.SelfNs == 0 {
				continue
			}
			self[p.Functions[i].Name] += float64(n.SelfNs)
			total += float64(n.SelfNs)
		}
	}
	if total > 0 {
		for k := range self {
			self[k] /= total
		}
	}
	return self
}

// tvd is the total variation distance between two sets of shares, in
// points.
func tvd(a, b map[string]float64) float64 {
	d := 0.0
	for k, v := range a {
		d += math.Abs(v - b[k])
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d += v
		}
	}
	return 50 * d
}

func fidelitySection(r fidelityResults, when string) section {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s.\n\n", when)
	if r.luaSkipped != "" {
		fmt.Fprintf(&b, "Lua: not measured: %s.\n\n", r.luaSkipped)
	} else {
		fmt.Fprintf(&b, "Lua: testdata/lua/cpu.lua, %s rounds sampled by perf at %s Hz, %s traced with measured times "+
			"(`record --sample=0`: raw with `--no-compensate`, and compensated), %s with the default probes (`record`: "+
			"CPU sampled every 250µs, short functions moved to counting). Distance in points against perf's first run "+
			"(goal: at most 10); the default profile's against the same run's samples with those inside waiting calls "+
			"kept, as sampled busy time keeps them.\n\n",
			fidelityPerfRounds, perfHz, fidelityRounds, fidelityDefaultRounds)
		b.WriteString("| setting | perf vs perf | profile raw | profile compensated | profile default | traced ÷ untraced wall: measured; default | perf samples |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
		for _, f := range r.lua {
			fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f× (%.2f s ÷ %.2f s); %.1f× (%.2f s ÷ %.2f s) | %d, %d |\n", f.setting, f.floor, f.raw, f.comp, f.sampled,
				float64(f.traced)/float64(f.untraced), f.traced.Seconds(), f.untraced.Seconds(),
				float64(f.sampledWall)/float64(f.untracedLong), f.sampledWall.Seconds(), f.untracedLong.Seconds(), f.perfN[0], f.perfN[1])
		}
		for _, f := range r.lua {
			shareTable(&b, fmt.Sprintf("Lua, %s", f.setting), f.rows, false)
		}
	}
	if r.redisSkipped != "" {
		fmt.Fprintf(&b, "\nredis: not measured: %s.\n\n", r.redisSkipped)
	} else if f := r.redis; f != nil {
		fmt.Fprintf(&b, "\nredis: `redis-benchmark -t set,get -n %d -c 20`, unpinned; busy shares (samples inside a waiting call left out; "+
			"kept for the default profile, `attach` sampled for the span of %d benchmarks; raw and compensated are `--sample=0`, one). "+
			"A fresh server runs %d benchmarks first (it speeds up over its first few). "+
			"Requests/s untraced are the median of %d benchmarks, %d before the traced runs and %d after them (GET/s: %s before, %s after), "+
			"with the default probes of its %d (one lands at either of two rates some 20%% apart).\n\n",
			redisRequests, sampledBenchmarks, redisWarmRuns, 2*rateRuns, rateRuns, rateRuns, rates(f.untracedRuns[0]), rates(f.untracedRuns[1]), sampledBenchmarks)
		b.WriteString("| perf vs perf | profile raw | profile compensated | profile default (on CPU) | profile default, waiting calls left out | GET requests/s attached ÷ untraced: compensated; default | SET | perf samples |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(&b, "| %.1f | %.1f | %.1f | %.1f | %.1f | %.0f%% (%.0f ÷ %.0f); %.0f%% | %.0f%% (%.0f ÷ %.0f) | %d, %d |\n", f.floor, f.raw, f.comp, f.sampled, f.waitingOut,
			100*f.traced["GET"]/f.untraced["GET"], f.traced["GET"], f.untraced["GET"], 100*f.sampledRPS["GET"]/f.untraced["GET"],
			100*f.traced["SET"]/f.untraced["SET"], f.traced["SET"], f.untraced["SET"], f.perfN[0], f.perfN[1])
		fmt.Fprintf(&b, "\nredis's main thread on a CPU during the default attach: %.1f%% of its wall time by perf stat's task-clock of the thread, "+
			"%.1f%% by the profile's busy time (about %.1f%% with the probes' samples, which perf counts too, given the thread in proportion to its busy time).\n",
			100*f.mainShare.perf, 100*f.mainShare.busy, 100*f.mainShare.withProbes)
		if f.loops.untraced > 0 {
			fmt.Fprintf(&b, "\nredis's event loop: %.2f iterations (`epoll_wait` calls) a request untraced (perf stat), %.2f under perf record "+
				"(the reference runs: perf's own sampling moves it too), %.2f with the default probes "+
				"(the profile's count): the more requests it serves each time round, the smaller the share of its work per iteration "+
				"(`aeMain`'s own code, `beforeSleep`); unpinned, that follows where the scheduler puts the server, the benchmark and the tools (the pinned row).\n", f.loops.untraced, f.loops.perf, f.loops.traced)
		}
		shareTable(&b, "redis", f.rows, true)
	}
	if r.redisPinnedSkipped != "" {
		fmt.Fprintf(&b, "\nredis %s: not measured: %s.\n", redisLayouts[1].name, r.redisPinnedSkipped)
	} else if f := r.redisPinned; f != nil {
		fmt.Fprintf(&b, "\nredis %s (no raw and compensated runs): perf vs perf %.1f points; the default profile on CPU %.1f, "+
			"with waiting calls left out %.1f; GET %.0f%% of untraced (%.0f ÷ %.0f; untraced GET/s %s before the traced runs, %s after); event loop %.2f iterations a request untraced "+
			"(without perf), %.2f under perf record, %.2f with the default probes. With at least 1%% of perf's samples, on CPU: %s; waiting calls left out: %s (%s).\n",
			redisLayouts[1].name, f.floor, f.sampled, f.waitingOut, 100*f.sampledRPS["GET"]/f.untraced["GET"], f.sampledRPS["GET"], f.untraced["GET"],
			rates(f.untracedRuns[0]), rates(f.untracedRuns[1]),
			f.loops.untraced, f.loops.perf, f.loops.traced, offByTwo(f.rows), offByTwoBusy(f.rows), perfSpread(f.rows))
	}
	b.WriteString("\n")
	return newSection("fidelity", b.String())
}

// shareTable writes the rows of one program's shares, and which
// functions the default profile puts more than 2 points from perf.
// With waitingOut, a last column has the default profile with the time
// inside waiting calls left out, against perf's first column.
func shareTable(b *strings.Builder, title string, rows []fidelityRow, waitingOut bool) {
	fmt.Fprintf(b, "\n%s: functions with at least 1%% of perf's samples or of a profile's busy self time (shares):\n\n", title)
	b.WriteString("| function | perf | perf again | profile raw | profile compensated | perf on CPU | profile default |")
	if waitingOut {
		b.WriteString(" profile default, waiting calls left out |\n|---|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("\n|---|---|---|---|---|---|---|\n")
	}
	for _, r := range rows {
		fmt.Fprintf(b, "| `%s` | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% |", r.name, 100*r.perf, 100*r.perf2, 100*r.raw, 100*r.comp, 100*r.perfCPU, 100*r.sampled)
		if waitingOut {
			fmt.Fprintf(b, " %.1f%% |", 100*r.waitingOut)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "\n%s, the default profile against perf on CPU, functions with at least 1%% of perf's samples: %s (%s).\n", title, offByTwo(rows), perfSpread(rows))
	if waitingOut {
		fmt.Fprintf(b, "\n%s, the default profile with the time inside waiting calls left out against perf (first column), the same functions: %s.\n", title, offByTwoBusy(rows))
	}
}

// offByTwoBusy is offByTwo for the default profile with the time inside
// waiting calls left out, against perf's busy shares.
func offByTwoBusy(rows []fidelityRow) string {
	busy := make([]fidelityRow, len(rows))
	for i, r := range rows {
		busy[i] = fidelityRow{name: r.name, sampled: r.waitingOut, perfCPU: r.perf}
	}
	return offByTwo(busy)
}

// perfSpread says how far apart perf's two runs put one function, at
// most, of those with at least 1% of the first's samples: the noise of
// the reference offByTwo holds the profile to.
func perfSpread(rows []fidelityRow) string {
	worst, name := 0.0, ""
	for _, r := range rows {
		if d := 100 * math.Abs(r.perf-r.perf2); r.perf >= 0.01 && d > worst {
			worst, name = d, r.name
		}
	}
	if name == "" {
		return "perf's two runs agree on every one"
	}
	return fmt.Sprintf("perf's two runs at most %.1f points apart, on `%s`", worst, name)
}

// offByTwo names the functions with at least 1% of perf's samples (on
// CPU) whose share in the default profile is more than 2 points away.
func offByTwo(rows []fidelityRow) string {
	var off []string
	for _, r := range rows {
		if d := 100 * (r.sampled - r.perfCPU); r.perfCPU >= 0.01 && (d > 2 || d < -2) {
			off = append(off, fmt.Sprintf("`%s` %+.1f points", r.name, d))
		}
	}
	if len(off) == 0 {
		return "every one within 2 points"
	}
	return "more than 2 points off: " + strings.Join(off, ", ")
}

// rates lists requests/s rates as "81,200, 99,000 and 80,900".
func rates(vs []float64) string {
	var out []string
	for _, v := range vs {
		out = append(out, human.Count(int64(v+0.5)))
	}
	switch len(out) {
	case 0:
		return "none"
	case 1:
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}
