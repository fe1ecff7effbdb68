package attach

import (
	"path/filepath"
	"strings"

	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

// observe describes a recorded profile the way workload expected files do:
// program functions (not system libraries) with their calls and recursive
// calls over all threads, thread groups and process groups.
func observe(p *model.Profile) *workload.Expected {
	obs := &workload.Expected{Functions: map[string]workload.Counts{}}
	rootExe := ""
	if len(p.Processes) > 0 {
		rootExe = p.Processes[0].Exe
	}
	key := func(f int) (string, bool) {
		fn := p.Functions[f]
		path := p.Modules[fn.Module].Path
		if path == rootExe {
			return fn.Name, true
		}
		if systemLib(path) {
			return "", false
		}
		return filepath.Base(path) + ":" + fn.Name, true
	}
	for _, t := range p.Threads {
		for _, n := range t.Nodes[1:] {
			k, ok := key(n.Func)
			if !ok {
				continue
			}
			c := obs.Functions[k]
			c.Calls += uint64(n.Calls)
			c.RecursiveCalls += uint64(n.RecursiveCalls)
			obs.Functions[k] = c
		}
	}
	name := func(f int) string {
		if f == model.None {
			return ""
		}
		k, _ := key(f)
		return k
	}
	spawnerOf := map[[2]int]int{} // (process, tid) -> spawner
	for _, t := range p.Threads {
		spawnerOf[[2]int{t.Process, t.Tid}] = t.SpawnedBy
	}
	for _, t := range p.Threads {
		if t.ParentTid == 0 {
			continue
		}
		ps, ok := spawnerOf[[2]int{t.Process, t.ParentTid}]
		if !ok {
			ps = model.None
		}
		obs.Threads = append(obs.Threads, workload.ThreadGroup{SpawnedBy: name(t.SpawnedBy), NestingLevel: t.Level,
			ParentSpawnedBy: name(ps), Count: 1})
	}
	for i, pr := range p.Processes {
		if i == 0 {
			continue
		}
		obs.Processes = append(obs.Processes, workload.ProcessGroup{ForkedBy: name(pr.ForkedBy),
			Exe: filepath.Base(pr.Exe), Exec: pr.ExecOf != model.None, Count: 1})
	}
	obs.Normalize()
	return obs
}

// systemLib tells the C library, the dynamic linker and friends from the
// program's own modules.
func systemLib(path string) bool {
	base := filepath.Base(path)
	for _, p := range []string{"libc.so", "libc-", "ld-linux", "libpthread", "libstdc++", "libgcc_s", "libm.so", "libdl"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}
