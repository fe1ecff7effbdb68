package cmd

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestCalibrationLine(t *testing.T) {
	cost := model.ProbeCost{InNs: 13, OutNs: 21}
	for _, tc := range []struct {
		cal  *model.Calibration
		want string
	}{
		{nil, "not measured: times include the probes' cost (--no-compensate, or an older or imported profile)"},
		{&model.Calibration{Host: "AMD EPYC (2 CPUs)", Inline: cost, Compensated: true, SubtractedNs: 4_700_000, HeldNs: 18_000_000},
			"inline 13ns in the callee + 21ns in the caller per call on AMD EPYC (2 CPUs); taken out: 4.70ms of probes, 18.0ms of set-up"},
		{&model.Calibration{Host: "AMD EPYC (2 CPUs)", Inline: cost, Compensated: true, SubtractedNs: 4_700_000, HeldNs: 18_000_000, Stops: 2000, StopNs: 120_000_000},
			"inline 13ns in the callee + 21ns in the caller per call; trap stops measured one by one on AMD EPYC (2 CPUs); taken out: 4.70ms of inline probes + 120ms of trap stops (2000 × 60.0µs) + 18.0ms of set-up = 143ms"},
		{&model.Calibration{Compensated: true, HeldNs: 1_000, Stops: 3, StopNs: 100_000},
			"trap stops measured one by one; taken out: 0ns of inline probes + 100µs of trap stops (3 × 33.3µs) + 1.00µs of set-up = 101µs"},
		{&model.Calibration{Inline: cost, Trap: model.ProbeCost{InNs: 27_000, OutNs: 26_000}},
			"inline 13ns in the callee + 21ns in the caller; trap 27.0µs in the callee + 26.0µs in the caller per call; not taken out of the times (not in every merged run)"},
	} {
		if got := calibrationLine(tc.cal); got != tc.want {
			t.Errorf("calibrationLine(%+v)\n got %s\nwant %s", tc.cal, got, tc.want)
		}
	}
}

func TestInfoDetailLine(t *testing.T) {
	p := model.New()
	p.Meta.Detail = &model.DetailRule{Funcs: "handle_request", SlowNs: 10e6, If: "ret<0", Limit: 50}
	p.Threads = []model.Thread{{Trees: make([]model.DetailTree, 3), DroppedTrees: 2}, {Trees: make([]model.DetailTree, 4)}}
	want := "--detail handle_request --slow 10ms --detail-if 'ret<0' --detail-limit 50: 7 trees (2 dropped)"
	if got := detailLine(p); got != want {
		t.Errorf("detail line %q, want %q", got, want)
	}
}

// info lists the functions traced from later in the run, by time then
// name, after the threads; a profile without any prints no such section.
func TestInfoTracedLater(t *testing.T) {
	for _, tc := range []struct {
		name  string
		since map[string]int64
		want  string // the output's tail after the threads section; "" = no section
	}{
		{"from the start", nil, ""},
		{"later", map[string]int64{"libc.so.6:usleep": 1_200_000_000, "compute": 61_500_000_000, "worker": 1_200_000_000},
			"\ntraced from later in the run (3)\n" +
				"  +1.20s   libc.so.6:usleep\n" +
				"  +1.20s   worker\n" +
				"  +61.50s  compute\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := modeltest.Sample()
			for f := range p.Functions {
				if ns, ok := tc.since[p.FuncName(f)]; ok {
					p.Functions[f].TracedSinceNs = ns
				}
			}
			var buf strings.Builder
			if err := writeInfo(&buf, p); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			_, tail, ok := strings.Cut(out, "\ntraced from later")
			if tc.want == "" {
				if ok {
					t.Fatalf("unexpected section:\n%s", out)
				}
				return
			}
			if got := "\ntraced from later" + tail; !ok || got != tc.want {
				t.Errorf("section\n%s\nwant\n%s", got, tc.want)
			}
			if i := strings.Index(out, "\nthreads ("); i < 0 || i > strings.Index(out, "\ntraced from later") {
				t.Errorf("section not after the threads:\n%s", out)
			}
		})
	}
}

// info's labels are true: a detach is said as how the trace ended, not as
// partial, and a process that did not exit is running, with no exit code.
func TestInfoLabels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(p *model.Profile)
		want    []string // lines of the output, spaces squeezed
		notWant []string
	}{
		{"exited", func(p *model.Profile) {}, []string{"partial no", "100 - - /bin/app exit 0"}, []string{"ended"}},
		{"detached", func(p *model.Profile) {
			p.Meta.Detached = true
			p.Processes[0].Exited = false
		}, []string{"partial no", "ended detached (the target went on running)", "100 - - /bin/app running"}, nil},
		{"detached, calls dropped", func(p *model.Profile) {
			p.Meta.Detached, p.Meta.Partial, p.Meta.PartialReason = true, true, "calls dropped"
		}, []string{"partial yes: calls dropped", "ended detached (the target went on running)"}, nil},
		{"killed", func(p *model.Profile) {
			p.Meta.Partial, p.Meta.PartialReason = true, "target killed by SIGKILL"
			p.Processes[0].Signal = "SIGKILL"
		}, []string{"partial yes: target killed by SIGKILL", "100 - - /bin/app killed by SIGKILL"}, []string{"ended"}},
	} {
		p := modeltest.Sample()
		tc.edit(p)
		var buf strings.Builder
		if err := writeInfo(&buf, p); err != nil {
			t.Fatal(err)
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(buf.String(), "\n") {
			lines[strings.Join(strings.Fields(l), " ")] = true
		}
		for _, l := range tc.want {
			if !lines[l] {
				t.Errorf("%s: no line %q in\n%s", tc.name, l, buf.String())
			}
		}
		for _, s := range tc.notWant {
			if strings.Contains(buf.String(), s) {
				t.Errorf("%s: %q in\n%s", tc.name, s, buf.String())
			}
		}
	}
}

// info lists the functions without an inline probe, the most called
// first, with a taken-out probe's end; --stats shows the first 20 of the
// same list, then how many more.
func TestInfoNotInline(t *testing.T) {
	p := modeltest.Sample()
	set := func(name string, k model.ProbeKind, note string, until int64) {
		for f := range p.Functions {
			if p.FuncName(f) == name {
				p.Functions[f].Probe, p.Functions[f].ProbeNote, p.Functions[f].TracedUntilNs = k, note, until
			}
		}
	}
	set("main", model.ProbeInline, "", 0)
	set("fib", model.ProbeTrap, "a branch at +0x4 lands inside the first 5 bytes", 1_500_000_000)
	set("compute", model.ProbeNone, "returns twice", 0)
	var buf strings.Builder
	if err := writeInfo(&buf, p); err != nil {
		t.Fatal(err)
	}
	want := "\nfunctions without an inline probe (2)\n" +
		"  PROBE              CALLS  FUNCTION  WHY\n" +
		"  trap until +1.50s  5      fib       a branch at +0x4 lands inside the first 5 bytes\n" +
		"  none               2      compute   returns twice\n"
	if _, tail, ok := strings.Cut(buf.String(), "\nfunctions without"); !ok || "\nfunctions without"+tail != want {
		t.Errorf("info:\n%s\nwant the tail\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := writeNotInline(&buf, p, "functions without an inline probe", 1); err != nil {
		t.Fatal(err)
	}
	want = "functions without an inline probe (2)\n" +
		"  PROBE              CALLS  FUNCTION  WHY\n" +
		"  trap until +1.50s  5      fib       a branch at +0x4 lands inside the first 5 bytes\n" +
		"  … 1 more (profile info lists them all)\n"
	if buf.String() != want {
		t.Errorf("stats list:\n%q\nwant\n%q", buf.String(), want)
	}
}

// A profile with CPU samples says how its busy times were sampled, after
// the probes' cost; one without says nothing of it.
func TestInfoBusyTimes(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *model.Profile
		want string // the line; "" = none
	}{
		{"sampled", modeltest.CPUSampled(), "busy times    sampled: 26 samples every 10ns (kernel too) — 3.70% in the probes' code\n"},
		{"not sampled", modeltest.Sample(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf strings.Builder
			if err := writeInfo(&buf, tc.p); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			i := strings.Index(out, "\nbusy times")
			if tc.want == "" {
				if i >= 0 {
					t.Fatalf("unexpected busy times line:\n%s", out)
				}
				return
			}
			cost := strings.Index(out, "\nprobe cost")
			if i < 0 || cost < 0 || cost > i || !strings.HasPrefix(out[i+1:], tc.want) {
				t.Errorf("no line %q after the probe cost in\n%s", tc.want, out)
			}
		})
	}
}
