package model_test

import (
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
