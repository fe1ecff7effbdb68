package workload

import (
	"bufio"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Properties of the sigalrm, exceptions, threads64, inflight and
// unpatchable workloads that their expected files cannot express.

// sigalrm's counts follow its arguments exactly, whichever ends first, the
// ticks or the loop.
func TestSigalrmScales(t *testing.T) {
	mustBuild(t)
	t.Parallel()
	for _, tc := range []struct{ ticks, iters uint64 }{{50, 3000000}, {300, 10}, {0, 5}} {
		args := []string{strconv.FormatUint(tc.ticks, 10), strconv.FormatUint(tc.iters, 10)}
		got, err := SelfCheck("sigalrm", args...)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]Counts{
			"main": {1, 0}, "loop_work": {tc.iters, 0}, "leaf": {2 * tc.iters, 0},
			"on_tick": {tc.ticks, 0}, "tick_work": {tc.ticks, 0},
		}
		for f, c := range want {
			if got.Functions[f] != c {
				t.Errorf("sigalrm %v: %s = %+v, want %+v", args, f, got.Functions[f], c)
			}
		}
		if got.ExitCode != 0 {
			t.Errorf("sigalrm %v: exit code %d", args, got.ExitCode)
		}
	}
}

// exceptions prints the same backtrace lines on every run (the offsets are
// relative to each module's load base), in the documented format.
func TestExceptionsBacktraceStable(t *testing.T) {
	mustBuild(t)
	t.Parallel()
	out1, st1 := run(t, "exceptions")
	out2, st2 := run(t, "exceptions")
	if st1.ExitCode() != 0 || st2.ExitCode() != 0 {
		t.Fatalf("exceptions: exit codes %d, %d", st1.ExitCode(), st2.ExitCode())
	}
	if !bytes.Equal(out1, out2) {
		t.Errorf("exceptions: stdout differs between runs:\n%s\n---\n%s", out1, out2)
	}
	lines := strings.Split(strings.TrimSuffix(string(out1), "\n"), "\n")
	if len(lines) < 3 || lines[0] != "exceptions: caught=10000" {
		t.Fatalf("exceptions stdout %q", out1)
	}
	m := regexp.MustCompile(`^backtrace: frames=(\d+) checksum=[0-9a-f]{16}$`).FindStringSubmatch(lines[1])
	if m == nil {
		t.Fatalf("exceptions: second line %q", lines[1])
	}
	n, _ := strconv.Atoi(m[1])
	if n < 12 || len(lines) != 2+n {
		t.Fatalf("exceptions: %d frames, %d lines after the header", n, len(lines)-2)
	}
	frame := regexp.MustCompile(`^bt (\d+) ([^ ]+)\+0x[0-9a-f]+$`)
	for i, l := range lines[2:] {
		fm := frame.FindStringSubmatch(l)
		if fm == nil || fm[1] != strconv.Itoa(i) {
			t.Errorf("exceptions: frame line %q", l)
			continue
		}
		// bt_probe, f9..f0 and main are in the executable.
		if i <= 11 && fm[2] != "exe" {
			t.Errorf("exceptions: frame %d in %s, want exe", i, fm[2])
		}
	}
}

// threads64 with a few rounds: the counts scale with the rounds.
func TestThreads64Rounds(t *testing.T) {
	mustBuild(t)
	t.Parallel()
	got, err := SelfCheck("threads64", "5")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Counts{
		"main": {1, 0}, "round": {5, 0}, "worker": {320, 0},
		"work_a": {960, 0}, "work_b": {960, 0},
	}
	for f, c := range want {
		if got.Functions[f] != c {
			t.Errorf("threads64 5: %s = %+v, want %+v", f, got.Functions[f], c)
		}
	}
	wantThreads := []ThreadGroup{{SpawnedBy: "round", NestingLevel: 1, Count: 320}}
	if !reflect.DeepEqual(got.Threads, wantThreads) {
		t.Errorf("threads64 5: threads %+v, want %+v", got.Threads, wantThreads)
	}
}

// inflightRun drives inflight through stdin the way an attach test does:
// wait for "ready", send "mark", let it run, send "quit".
func inflightRun(t *testing.T, args ...string) (steps, afterMark int64, report *Expected) {
	t.Helper()
	bin, err := Path("inflight")
	if err != nil {
		t.Fatal(err)
	}
	reportPath := t.TempDir() + "/selfcheck.json"
	cmd := exec.Command(bin, append(args, "--selfcheck="+reportPath)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out := bufio.NewReader(stdoutPipe)
	line := func() string {
		l, err := out.ReadString('\n')
		if err != nil && err != io.EOF {
			t.Fatalf("inflight %v: reading stdout: %v", args, err)
		}
		return strings.TrimSuffix(l, "\n")
	}
	if l := line(); l != "ready" {
		t.Fatalf("inflight %v: first line %q, want ready", args, l)
	}
	time.Sleep(20 * time.Millisecond)
	io.WriteString(stdin, "mark\n")
	if l := line(); !strings.HasPrefix(l, "mark steps=") {
		t.Fatalf("inflight %v: %q, want mark steps=K", args, l)
	}
	time.Sleep(20 * time.Millisecond)
	io.WriteString(stdin, "quit\n")
	rest, _ := io.ReadAll(out)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("inflight %v: %v\n%s", args, err, rest)
	}
	m := regexp.MustCompile(`^steps=(\d+)\nsteps_after_mark=(\d+)\nresult=[0-9a-f]{16}\n$`).FindSubmatch(rest)
	if m == nil {
		t.Fatalf("inflight %v: stdout end %q", args, rest)
	}
	steps, _ = strconv.ParseInt(string(m[1]), 10, 64)
	afterMark, _ = strconv.ParseInt(string(m[2]), 10, 64)
	data, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatalf("inflight %v: no self-check report: %v", args, err)
	}
	report, err = decode(data)
	if err != nil {
		t.Fatalf("inflight %v: self-check report: %v", args, err)
	}
	return steps, afterMark, report
}

// The stdin protocol of inflight: busy stepping before the mark, none with
// --wait-mark (then every step comes after the mark); the printed totals
// agree with the self-count.
func TestInflightProtocol(t *testing.T) {
	mustBuild(t)
	t.Parallel()
	for _, tc := range []struct {
		args  []string
		exact bool
	}{{nil, false}, {[]string{"--wait-mark"}, true}} {
		steps, afterMark, rep := inflightRun(t, tc.args...)
		if afterMark <= 0 || afterMark > steps || (tc.exact && afterMark != steps) {
			t.Errorf("inflight %v: steps=%d steps_after_mark=%d", tc.args, steps, afterMark)
		}
		want := map[string]Counts{
			"main": {1, 0}, "outer": {1, 0}, "long_running": {1, 0},
			"step": {uint64(steps), 0}, "after": {1, 0},
		}
		for f, c := range want {
			if rep.Functions[f] != c {
				t.Errorf("inflight %v: %s = %+v, want %+v", tc.args, f, rep.Functions[f], c)
			}
		}
	}
}

// spin_back's code in the built binary: no endbr64, and a branch back to
// byte 2, inside the 5 bytes a jmp rel32 at the entry would replace.
func TestUnpatchableLayout(t *testing.T) {
	f, _ := openWorkload(t, "unpatchable")
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var sym *elf.Symbol
	for i := range syms {
		if syms[i].Name == "spin_back" {
			sym = &syms[i]
		}
	}
	if sym == nil || elf.ST_TYPE(sym.Info) != elf.STT_FUNC || sym.Size == 0 {
		t.Fatalf("spin_back: symbol %+v, want a sized STT_FUNC", sym)
	}
	text := f.Section(".text")
	if text == nil || sym.Value < text.Addr || sym.Value+sym.Size > text.Addr+text.Size {
		t.Fatalf("spin_back at %#x is not in .text", sym.Value)
	}
	code := make([]byte, sym.Size)
	if _, err := text.ReadAt(code, int64(sym.Value-text.Addr)); err != nil {
		t.Fatal(err)
	}
	want := []byte{0x31, 0xc0, 0x83, 0xc0, 0x01, 0x39, 0xf8, 0x7c, 0xf9, 0xc3}
	if !bytes.Equal(code, want) {
		t.Fatalf("spin_back code % x, want % x", code, want)
	}
	// jl rel8 at +7: target = 7 + 2 + rel8.
	if target := 7 + 2 + int(int8(code[8])); target < 1 || target >= 5 {
		t.Errorf("spin_back's loop branches to +%d, want inside bytes 1..4", target)
	}
}
