package summary_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

// Labels that are true: a detached profile says detached, not partial, and
// a process that did not exit shows no exit code 0.
func TestLabels(t *testing.T) {
	for _, c := range []struct {
		name     string
		edit     func(p *model.Profile)
		states   []string
		table    []string // regular expressions the table must match
		detached bool
	}{
		{"exited", func(p *model.Profile) {}, []string{"exited", "exited"},
			[]string{`(?m)^ *partial +no *$`, `(?m)^ *detached +no *$`, `(?m)^ *200 +100 +do_fork +/bin/app +0 +- *$`}, false},
		{"detached, still running", func(p *model.Profile) {
			p.Meta.Detached = true
			p.Processes[0].Exited, p.Processes[1].Exited = false, false
		}, []string{"running", "running"},
			[]string{`(?m)^ *partial +no *$`, `(?m)^ *detached +yes \(the target went on running\) *$`,
				`(?m)^ *100 +0 +- +/bin/app +running +- *$`, `(?m)^ *200 +100 +do_fork +/bin/app +running +- *$`}, true},
		{"killed", func(p *model.Profile) {
			p.Meta.Partial, p.Meta.PartialReason = true, "target killed by SIGKILL"
			p.Processes[1].Signal = "SIGKILL"
		}, []string{"exited", "killed"},
			[]string{`(?m)^ *partial +yes *$`, `(?m)^ *200 +100 +do_fork +/bin/app +- +SIGKILL *$`}, false},
		{"replaced by exec", func(p *model.Profile) {
			p.Processes[1].Exited = false
			img := p.Processes[1]
			img.ExecOf, img.Exe, img.Argv, img.Exited, img.ExitCode = 1, "/bin/other", []string{"other"}, true, 3
			p.Processes = append(p.Processes, img)
		}, []string{"exited", "exec", "exited"},
			[]string{`(?m)^ *200 +100 +do_fork +/bin/app +exec +- *$`, `(?m)^ *200 +100 +do_fork +/bin/other +3 +- *$`}, false},
	} {
		p := modeltest.Sample()
		c.edit(p)
		r := mustCompute(t, p, summary.Options{})
		if r.Meta.Detached != c.detached {
			t.Errorf("%s: meta detached %v, want %v", c.name, r.Meta.Detached, c.detached)
		}
		var states []string
		for _, x := range r.Processes {
			states = append(states, x.State)
		}
		if !equalStrings(states, c.states) {
			t.Errorf("%s: states %v, want %v", c.name, states, c.states)
		}
		var b bytes.Buffer
		must(t, summary.WriteTable(&b, r))
		table := strings.ReplaceAll(b.String(), "│", " ") // cells apart by spaces only
		for _, re := range c.table {
			if !regexp.MustCompile(re).MatchString(table) {
				t.Errorf("%s: the table does not match %s:\n%s", c.name, re, table)
			}
		}
	}
}
