package attach

import (
	"github.com/profile-dev/profile/attach/internal/inject"
	"github.com/profile-dev/profile/attach/internal/procfs"
	"github.com/profile-dev/profile/instrument"
)

// setupChain writes the chain into the slack of the executable or of the
// dynamic linker of stopped thread tid's process. Without slack (about one
// file in a hundred) injections keep `syscall; int3`.
func (e *engine) setupChain(tid int, as *space) {
	if as.chain.Addr != 0 {
		return
	}
	pid := procfs.Tgid(tid)
	maps, err := instrument.ReadMaps(pid)
	if err != nil {
		return
	}
	aux, err := procfs.Auxv(pid)
	if err != nil {
		return
	}
	var paths []string
	for _, at := range []uint64{procfs.AtEntry, procfs.AtBase} {
		for _, m := range maps {
			if a := aux[at]; a >= m.Start && a < m.End && m.FileBacked() {
				paths = append(paths, m.Path)
				break
			}
		}
	}
	addr, ok := instrument.Slack(maps, paths, uint64(inject.ChainSize))
	if !ok {
		return
	}
	// The slack's bytes are its file's: a chain a killed profiler left
	// there is not put back at detach.
	orig, err := instrument.FileBytes(pid, maps, addr, inject.ChainSize)
	if err != nil {
		orig = make([]byte, inject.ChainSize)
		if as.readText(tid, addr, orig) != nil {
			return
		}
	}
	if as.chain.Write(tid, addr, orig) == nil {
		e.healChain(tid, as)
	}
}
