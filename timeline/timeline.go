// Package timeline presents the detail trees of a profile (record
// --detail, model.DetailTree) as a timeline, as uftrace replay does: per
// thread, one line per call with its start, duration, arguments and
// return value, indented by depth; text for people, JSON for tools. It
// only presents: the trees come from the profile as they are.
package timeline

import (
	"errors"
	"fmt"

	"github.com/profile-dev/profile/model"
)

// ErrNoDetail is returned for a profile recorded without --detail: it
// cannot have trees (one recorded with it but where no call met the rule
// is shown, with no trees).
var ErrNoDetail = errors.New("no detail trees: record with --detail REGEX")

// Options select what is shown.
type Options struct {
	Tid       int   // only the trees of this thread (0: every thread)
	MinNs     int64 // only trees whose kept call lasted at least this long
	FullNames bool  // text: names in full, not shortened (JSON always is)
}

// threadTrees is a thread with the trees of it that are shown.
type threadTrees struct {
	t     *model.Thread
	pid   int
	trees []*model.DetailTree
}

// selectTrees returns the threads in scope that have detail trees, kept
// or dropped, in profile order, each with its trees that pass opt.MinNs.
func selectTrees(p *model.Profile, opt Options) ([]threadTrees, error) {
	anyTrees, found := false, false
	var out []threadTrees
	for i := range p.Threads {
		t := &p.Threads[i]
		has := len(t.Trees) > 0 || t.DroppedTrees > 0
		anyTrees = anyTrees || has
		if opt.Tid != 0 && t.Tid != opt.Tid {
			continue
		}
		found = true
		if !has {
			continue
		}
		tt := threadTrees{t: t}
		if t.Process >= 0 && t.Process < len(p.Processes) {
			tt.pid = p.Processes[t.Process].Pid
		}
		for j := range t.Trees {
			tr := &t.Trees[j]
			if c := tr.Calls[keptIndex(tr)]; c.EndNs-c.StartNs >= opt.MinNs {
				tt.trees = append(tt.trees, tr)
			}
		}
		out = append(out, tt)
	}
	if !anyTrees && p.Meta.Detail == nil {
		return nil, ErrNoDetail
	}
	if opt.Tid != 0 && !found {
		return nil, fmt.Errorf("no thread %d in the profile", opt.Tid)
	}
	return out, nil
}

// keptIndex is the index of a tree's kept call: its first call with
// DetailKept (the ones before it are its ancestors); the root when none
// is marked.
func keptIndex(tr *model.DetailTree) int {
	for i, c := range tr.Calls {
		if c.Flags.Has(model.DetailKept) {
			return i
		}
	}
	return 0
}

// args returns the argument registers of c that are shown: NArgs of them,
// all six when NArgs is unknown; nil when they were not recorded.
func args(c *model.DetailCall) []uint64 {
	if !c.Flags.Has(model.DetailArgs) {
		return nil
	}
	n := c.NArgs
	if n < 0 || n > len(c.Args) {
		n = len(c.Args)
	}
	return c.Args[:n]
}
