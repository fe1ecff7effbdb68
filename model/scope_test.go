package model_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// A scope is named as titles say it, and CheckScope refuses one that
// matches no (member) thread with the error that says which.
func TestCheckScope(t *testing.T) {
	for _, c := range []struct {
		scope      model.Scope
		name, fail string // fail: CheckScope's error, "" for none
	}{
		{model.Scope{}, "", ""},
		{model.Scope{Pid: 100}, "pid 100", ""},
		{model.Scope{Tid: 102}, "tid 102", ""}, // a composite's member
		{model.Scope{Pid: 200, Tid: 200}, "pid 200, tid 200", ""},
		{model.Scope{Tid: 999}, "tid 999", "no thread 999 in the profile"},
		{model.Scope{Pid: 999}, "pid 999", "no process 999 in the profile"},
		{model.Scope{Pid: 100, Tid: 200}, "pid 100, tid 200", "no thread 200 in process 100 in the profile"},
	} {
		if got := c.scope.String(); got != c.name {
			t.Errorf("%#v: String %q, want %q", c.scope, got, c.name)
		}
		got := ""
		if err := modeltest.SampleComposite().CheckScope(c.scope); err != nil {
			got = err.Error()
		}
		if got != c.fail {
			t.Errorf("%#v: CheckScope %q, want %q", c.scope, got, c.fail)
		}
	}
}

// Only keeps the recorded threads of a scope, and refuses to divide a
// merged thread.
func TestOnly(t *testing.T) {
	p := modeltest.Sample()
	for _, c := range []struct {
		scope model.Scope
		tids  []int
	}{
		{model.Scope{}, []int{100, 101, 102, 200}},
		{model.Scope{Tid: 101}, []int{101}},
		{model.Scope{Pid: 100}, []int{100, 101, 102}},
		{model.Scope{Pid: 200}, []int{200}},
	} {
		q, err := p.Only(c.scope)
		if err != nil {
			t.Fatalf("%v: %v", c.scope, err)
		}
		var got []int
		for _, th := range q.Threads {
			got = append(got, th.Tid)
		}
		if !slices.Equal(got, c.tids) {
			t.Errorf("%v: threads %v, want %v", c.scope, got, c.tids)
		}
	}
	if _, err := p.Only(model.Scope{Tid: 99999}); err == nil {
		t.Error("a tid not in the profile: no error")
	}
	// SampleComposite's thread 101 merges two runs' threads 101 and 102.
	c := modeltest.SampleComposite()
	if _, err := c.Only(model.Scope{Tid: 102}); err == nil || !strings.Contains(err.Error(), "cannot be divided") {
		t.Errorf("a merged thread's member: %v", err)
	}
	if q, err := c.Only(model.Scope{Pid: 100}); err != nil || len(q.Threads) != 2 {
		t.Errorf("a process of a merged profile: %v", err)
	}
}
