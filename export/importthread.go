package export

import (
	"path"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profile-dev/profile/model"
)

// threadKey identifies a thread by what a sample's labels say of it.
type threadKey struct {
	pid, tid int
	hasTid   bool
	name     string
}

// labelThread reads a sample's thread: our "thread" label ("tid name"),
// perf_to_profile's numeric pid and tid with its comm label, or a Go
// goroutine label. Without any, the key is the process's AllThreads.
func labelThread(s *profile.Sample) threadKey {
	var k threadKey
	num := func(key string) (int, bool) {
		if v := s.NumLabel[key]; len(v) > 0 {
			return int(v[0]), true
		}
		if v := s.Label[key]; len(v) > 0 {
			n, err := strconv.Atoi(strings.TrimSpace(v[0]))
			return n, err == nil
		}
		return 0, false
	}
	str := func(key string) string {
		if v := s.Label[key]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	k.pid, _ = num("pid")
	if t := str("thread"); t != "" {
		first, rest, _ := strings.Cut(t, " ")
		if n, err := strconv.Atoi(first); err == nil {
			k.tid, k.hasTid, k.name = n, true, rest
		} else {
			k.name = t
		}
	}
	if !k.hasTid {
		k.tid, k.hasTid = num("tid")
	}
	if !k.hasTid {
		k.tid, k.hasTid = num("thread_id")
	}
	if g := str("goroutine"); g != "" || len(s.NumLabel["goroutine"]) > 0 {
		if k.tid, k.hasTid = num("goroutine"); k.hasTid {
			g = strconv.Itoa(k.tid)
		}
		k.name = "goroutine " + g
	}
	if k.name == "" {
		k.name = cmpOr(str("comm"), str("thread_name"))
	}
	if !k.hasTid && k.name == "" {
		k.name = AllThreads
	}
	return k
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// thread returns the index of s's thread, adding it (and its process) on
// first sight. A process's first thread is its level 0, the others level
// 1: pprof does not say who created whom.
func (im *importer) thread(s *profile.Sample) int {
	k := labelThread(s)
	if i, ok := im.threads[k]; ok {
		return i
	}
	pid := k.pid
	if pid <= 0 {
		pid, im.noPid = 1, true
	}
	if im.procs == nil {
		im.procs = map[int]int{}
	}
	proc, ok := im.procs[pid]
	level := 1
	if !ok {
		exe := im.p.Meta.Exe
		im.p.Processes = append(im.p.Processes, model.Process{Pid: pid, Parent: model.None, ForkedBy: model.None,
			ExecOf: model.None, Exe: exe, Argv: im.p.Meta.Command})
		proc, level = len(im.p.Processes)-1, 0
		im.procs[pid] = proc
	}
	tid := k.tid
	if !k.hasTid {
		tid = pid // the process's threads together
	}
	name := k.name
	if name == "" && im.p.Meta.Exe != "" {
		name = path.Base(im.p.Meta.Exe)
	}
	im.p.Threads = append(im.p.Threads, model.Thread{Tid: tid, Process: proc, Name: name, SpawnedBy: model.None, Level: level})
	im.trees = append(im.trees, model.NewTree())
	im.threads[k] = len(im.p.Threads) - 1
	return len(im.p.Threads) - 1
}
