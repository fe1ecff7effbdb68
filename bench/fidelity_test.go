package main

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
)

func TestInnermostIn(t *testing.T) {
	const exe = "/tmp/luadriver"
	script := ` 9946 
	           12cbe _dl_cache_libcmp (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)
	           1ab77 _start (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)

 9946 
	           183c0 luaV_execute (/tmp/luadriver)
	            b2ff luaD_callnoyield (/tmp/luadriver)
	            5770 _start (/tmp/luadriver)

 9946 
	ffffffff8100 entry_SYSCALL_64 ([kernel.kallsyms])
	           9a1c0 __memmove_avx_unaligned_erms (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            c0aa [unknown] (/tmp/luadriver)
	            c0ff luaH_resize (/tmp/luadriver)
	           183c0 luaV_execute (/tmp/luadriver)

 9946 
	           183ef luaV_execute (/tmp/luadriver)

 9946 
	ffffffff8100 do_epoll_wait ([kernel.kallsyms])
	           fe0a0 epoll_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)
	           183ef luaV_execute (/tmp/luadriver)

 9946 
	            5040 memcpy@plt (/tmp/luadriver)
	            c0ff luaH_resize (/tmp/luadriver)
`
	counts, n := innermostIn(strings.NewReader(script), exe, nil)
	if n != 5 || counts["luaV_execute"] != 3 || counts["luaH_resize"] != 2 || len(counts) != 2 {
		t.Fatalf("%d samples %v, want 5: luaV_execute 3, luaH_resize 2 (the ld.so sample left out, the PLT's given to its caller)", n, counts)
	}
	counts, n = innermostIn(strings.NewReader(script), exe, model.IsWaitingCall)
	if n != 4 || counts["luaV_execute"] != 2 {
		t.Fatalf("busy: %d samples %v, want 4 (the one inside epoll_wait left out)", n, counts)
	}
}

func TestTVD(t *testing.T) {
	for _, tc := range []struct {
		a, b map[string]float64
		want float64
	}{
		{map[string]float64{"f": 1}, map[string]float64{"f": 1}, 0},
		{map[string]float64{"f": 1}, map[string]float64{"g": 1}, 100},
		{map[string]float64{"f": 0.5, "g": 0.5}, map[string]float64{"f": 0.7, "h": 0.3}, 50},
	} {
		if got := tvd(tc.a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("tvd(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestBusySharesGiveOtherModulesToTheirCaller(t *testing.T) {
	p := &model.Profile{
		Modules: []model.Module{{}, {Path: "/usr/bin/app"}, {Path: "/lib/libc.so.6"}},
		Functions: []model.Function{
			{Module: 0, Name: "START"}, {Module: 1, Name: "main"}, {Module: 1, Name: "work"},
			{Module: 2, Name: "write"}, {Module: 2, Name: "_dl_start"},
		},
		Threads: []model.Thread{{Nodes: []model.Node{
			{Func: 0, Parent: model.None, SelfNs: 7},
			{Func: 1, Parent: 0, SelfNs: 10},
			{Func: 2, Parent: 1, SelfNs: 20},
			{Func: 3, Parent: 2, SelfNs: 30}, // work's: perf's sample would land in work
			{Func: 4, Parent: 0, SelfNs: 5},  // no caller in the module: left out
			{Func: 3, Parent: 1, SelfNs: 40}, // main's
		}}},
	}
	got := busyShares(p, "app")
	if math.Abs(got["main"]-0.5) > 1e-9 || math.Abs(got["work"]-0.5) > 1e-9 || len(got) != 2 {
		t.Fatalf("shares %v, want main 0.5 (10+40), work 0.5 (20+30)", got)
	}
}

// leaveWaitingOut drops the self time of a waiting call and of what runs
// below it; the rest stays.
func TestLeaveWaitingOut(t *testing.T) {
	p := &model.Profile{
		Modules: []model.Module{{}, {Path: "/usr/bin/app"}, {Path: "/lib/libc.so.6"}},
		Functions: []model.Function{
			{Module: 0, Name: "START"}, {Module: 1, Name: "main"}, {Module: 2, Name: "epoll_wait"},
			{Module: 1, Name: "handler"}, {Module: 2, Name: "memcpy"},
		},
		Threads: []model.Thread{{Nodes: []model.Node{
			{Func: 0, Parent: model.None, SelfNs: 7},
			{Func: 1, Parent: 0, SelfNs: 10},
			{Func: 2, Parent: 1, SelfNs: 20},
			{Func: 3, Parent: 2, SelfNs: 30}, // inside epoll_wait (a signal handler, say)
			{Func: 4, Parent: 1, SelfNs: 40},
		}}},
	}
	leaveWaitingOut(p)
	var got []int64
	for _, n := range p.Threads[0].Nodes {
		got = append(got, n.SelfNs)
	}
	if want := []int64{7, 10, 0, 0, 40}; !slices.Equal(got, want) {
		t.Fatalf("self times %v, want %v", got, want)
	}
}

// offByTwo holds the default profile to perf on CPU, for functions with at
// least 1% of perf's samples only, and more than 2 points either way.
func TestOffByTwo(t *testing.T) {
	for _, tc := range []struct {
		rows []fidelityRow
		want string
	}{
		{[]fidelityRow{{name: "f", perfCPU: 0.10, sampled: 0.12}}, "every one within 2 points"},
		{[]fidelityRow{{name: "f", perfCPU: 0.10, sampled: 0.125}, {name: "g", perfCPU: 0.05, sampled: 0.02}},
			"more than 2 points off: `f` +2.5 points, `g` -3.0 points"},
		{[]fidelityRow{{name: "rare", perfCPU: 0.005, sampled: 0.05}}, "every one within 2 points"},
	} {
		if got := offByTwo(tc.rows); got != tc.want {
			t.Errorf("offByTwo(%+v) = %q, want %q", tc.rows, got, tc.want)
		}
	}
}

// perfSpread names the function perf's two runs put furthest apart, of
// those with at least 1% of the first run's samples.
func TestPerfSpread(t *testing.T) {
	for _, tc := range []struct {
		rows []fidelityRow
		want string
	}{
		{[]fidelityRow{{name: "f", perf: 0.20, perf2: 0.221}, {name: "g", perf: 0.10, perf2: 0.09}, {name: "rare", perf: 0.005, perf2: 0.05}},
			"perf's two runs at most 2.1 points apart, on `f`"},
		{[]fidelityRow{{name: "f", perf: 0.20, perf2: 0.20}}, "perf's two runs agree on every one"},
	} {
		if got := perfSpread(tc.rows); got != tc.want {
			t.Errorf("perfSpread(%+v) = %q, want %q", tc.rows, got, tc.want)
		}
	}
}

// A part the run skipped says why in the section, the pinned redis row
// included.
func TestFidelitySectionSaysWhatWasSkipped(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    fidelityResults
		want string
	}{
		{"lua", fidelityResults{luaSkipped: "liblua5.4-dev is not installed"}, "liblua5.4-dev is not installed"},
		{"redis", fidelityResults{redisSkipped: "redis-server is not installed"}, "redis: not measured: redis-server is not installed."},
		{"pinned", fidelityResults{redis: &redisFidelity{}, redisPinnedSkipped: "the pinned layout needs two CPUs"},
			"redis " + redisLayouts[1].name + ": not measured: the pinned layout needs two CPUs."},
	} {
		if got := fidelitySection(tc.r, "today").text; !strings.Contains(got, tc.want) {
			t.Errorf("%s: section lacks %q:\n%s", tc.name, tc.want, got)
		}
	}
}

// The untraced rate is the median of the runs before and after the
// traced ones together; rates lists them for the report.
func TestMediansAndRates(t *testing.T) {
	before := map[string][]float64{"GET": {80000, 99000, 81000}, "SET": {70000}}
	after := map[string][]float64{"GET": {98000, 97000, 82000}}
	m := medians(before, after)
	if m["GET"] != (82000+97000)/2.0 || m["SET"] != 70000 {
		t.Errorf("medians %v, want GET 89500 and SET 70000", m)
	}
	for _, c := range []struct {
		in   []float64
		want string
	}{
		{nil, "none"},
		{[]float64{80900.4}, "80,900"},
		{[]float64{80000, 99000, 81000}, "80,000, 99,000 and 81,000"},
	} {
		if got := rates(c.in); got != c.want {
			t.Errorf("rates(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
