package attach

import (
	"errors"
	"slices"
	"strings"

	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/session"
)

// attachAll attaches to each process of pids in turn (with Options.Tree,
// each with its descendants, parents first), in one engine: a process
// already traced is running again before the next is stopped. A listed
// process that cannot be attached fails the whole attach, the ones
// already attached detached cleanly first; a descendant that ended
// meanwhile is left out.
func (e *engine) attachAll(pids []int) error {
	targets := slices.Clone(pids)
	listed := map[int]bool{}
	for _, pid := range pids {
		listed[pid] = true
		// Every listed process looked at before any is touched.
		if err := checkAttachable(pid); err != nil {
			return err
		}
	}
	if e.opt.Tree {
		targets = withDescendants(pids)
	}
	e.roots = targets
	e.attachParent = map[int]*session.Process{}
	for _, pid := range targets {
		// The leader's tid is the pid: a parent attached before is in
		// e.threads under its pid.
		if parent := e.threads[procfs.PPid(pid)]; parent != nil {
			e.attachParent[pid] = parent.proc.sp
		}
		err := e.attach(pid)
		if err == nil {
			continue
		}
		if !listed[pid] && !e.detaching && gone(pid, err) {
			continue
		}
		if len(e.threads) > 0 && !e.detaching {
			e.detachAll()
		}
		return err
	}
	return nil
}

// gone tells whether an attach failed because its process ended.
func gone(pid int, err error) bool {
	if errors.Is(err, ErrExitedDuringAttach) {
		return true
	}
	st := procfs.Status(pid)
	return st == nil || strings.HasPrefix(st["State"], "Z") || strings.HasPrefix(st["State"], "X")
}

// withDescendants is pids, each followed by its descendants (children
// before grandchildren), each once.
func withDescendants(pids []int) []int {
	var out []int
	seen := map[int]bool{}
	queue := slices.Clone(pids)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		queue = append(queue, procfs.Children(pid)...)
	}
	return out
}
