package flame_test

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/flame"
	"github.com/profile-dev/profile/model"
)

// widths maps each drawn frame's path ("" for all) to its width.
func widths(doc svgDoc) map[string]int64 {
	w := map[string]int64{}
	for _, f := range doc.Frames {
		w[strings.Join(f.path, ";")] = f.W
	}
	return w
}

// A scope draws its threads' contexts only, with the numbers of Sample's
// scripts (modeltest): thread 101 runs worker → spawn_more →
// pthread_create, worker → compute; 102 worker → compute; the forked 200
// child_work → fib → fib under its in-flight main → do_fork. A member of
// a composite thread is drawn with its own numbers, as the thread it was.
func TestScope(t *testing.T) {
	for _, c := range []struct {
		name, profile string
		opt           flame.Options
		subtitle      string
		want          map[string]int64
	}{
		{"tid calls", "sample", flame.Options{Scope: model.Scope{Tid: 101}, Value: export.Calls},
			"widths by calls · traced 353ns in 1 thread (tid 101)",
			map[string]int64{"": 4, "worker": 4, "worker;compute": 1, "worker;spawn_more": 2,
				"worker;spawn_more;libc.so.6:pthread_create": 1}},
		{"tid self", "sample", flame.Options{Scope: model.Scope{Tid: 101}, Value: export.Self},
			"widths by wall self time · traced 353ns in 1 thread (tid 101)",
			map[string]int64{"": 353, "START": 13, "worker": 340, "worker;compute": 300, "worker;spawn_more": 25,
				"worker;spawn_more;libc.so.6:pthread_create": 15}},
		{"pid and tid", "sample", flame.Options{Scope: model.Scope{Pid: 100, Tid: 102}},
			"widths by wall total time · traced 142ns in 1 thread (pid 100, tid 102)",
			map[string]int64{"": 142, "START": 12, "worker": 130, "worker;compute": 120}},
		{"forked pid, in flight", "sample", flame.Options{Scope: model.Scope{Pid: 200}, Value: export.Calls},
			"widths by calls · traced 140ns in 1 thread (pid 200)",
			map[string]int64{"": 3, "main": 3, "main;do_fork": 3, "main;do_fork;child_work": 3,
				"main;do_fork;child_work;fib": 2, "main;do_fork;child_work;fib;fib": 1}},
		{"forked pid total", "sample", flame.Options{Scope: model.Scope{Pid: 200}},
			"widths by wall total time · traced 140ns in 1 thread (pid 200)",
			map[string]int64{"": 140, "main": 140, "main;do_fork": 140, "main;do_fork;child_work": 110,
				"main;do_fork;child_work;fib": 25, "main;do_fork;child_work;fib;fib": 10}},
		{"thread frame", "sample", flame.Options{Scope: model.Scope{Tid: 102}, Threads: true, Value: export.Calls},
			"widths by calls · traced 142ns in 1 thread (tid 102)",
			map[string]int64{"": 2, "t102-102": 2, "t102-102;worker": 2, "t102-102;worker;compute": 1}},
		{"composite member", "composite", flame.Options{Scope: model.Scope{Tid: 102}},
			"widths by wall total time · traced 142ns in 1 thread (tid 102)",
			map[string]int64{"": 142, "START": 12, "worker": 130, "worker;compute": 120}},
		{"composite member calls", "composite", flame.Options{Scope: model.Scope{Tid: 101}, Value: export.Calls},
			"widths by calls · traced 353ns in 1 thread (tid 101)",
			map[string]int64{"": 4, "worker": 4, "worker;compute": 1, "worker;spawn_more": 2,
				"worker;spawn_more;libc.so.6:pthread_create": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, doc := render(t, profiles[c.profile](t), c.opt)
			if got := doc.text("subtitle"); got != c.subtitle {
				t.Errorf("subtitle %q, want %q", got, c.subtitle)
			}
			if got := widths(doc); !maps.Equal(got, c.want) {
				t.Errorf("frames %v, want %v", got, c.want)
			}
		})
	}
}

// A process's graph holds its threads only, and a composite thread's
// members drawn one by one add up to the threads they were made of.
func TestScopeProcess(t *testing.T) {
	for _, v := range []export.Value{export.Total, export.Self, export.Calls} {
		_, whole := render(t, profiles["sample"](t), flame.Options{Value: v})
		_, pid100 := render(t, profiles["sample"](t), flame.Options{Value: v, Scope: model.Scope{Pid: 100}})
		_, composite := render(t, profiles["composite"](t), flame.Options{Value: v, Scope: model.Scope{Pid: 100}})
		got, all := widths(pid100), widths(whole)
		if !maps.Equal(widths(composite), got) {
			t.Errorf("%s: composite pid 100 %v, want the sample's %v", v, widths(composite), got)
		}
		for path := range got {
			if strings.Contains(path, "child_work") {
				t.Errorf("%s: pid 100 has pid 200's %s", v, path)
			}
		}
		// the whole graph is pid 100's and pid 200's
		_, pid200 := render(t, profiles["sample"](t), flame.Options{Value: v, Scope: model.Scope{Pid: 200}})
		for path, w := range widths(pid200) {
			got[path] += w
		}
		if !maps.Equal(got, all) {
			t.Errorf("%s: pid 100 and 200 together %v, want the whole graph's %v", v, got, all)
		}
		if want := "in 3 threads (pid 100)"; !strings.Contains(pid100.text("subtitle"), want) {
			t.Errorf("%s: subtitle %q, want %q", v, pid100.text("subtitle"), want)
		}
	}
}

func TestScopeErrors(t *testing.T) {
	for _, c := range []struct {
		scope model.Scope
		want  string
	}{
		{model.Scope{Tid: 999}, "flame graph: no thread 999 in the profile"},
		{model.Scope{Pid: 999}, "flame graph: no process 999 in the profile"},
		{model.Scope{Pid: 100, Tid: 200}, "flame graph: no thread 200 in process 100 in the profile"},
	} {
		var buf bytes.Buffer
		err := flame.SVG(&buf, profiles["sample"](t), flame.Options{Scope: c.scope})
		if err == nil || err.Error() != c.want || buf.Len() != 0 {
			t.Errorf("%v: error %v (%d bytes written), want %q and nothing written", c.scope, err, buf.Len(), c.want)
		}
	}
}
