// Command profile records exact per-thread call graphs of native Linux
// x86-64 programs with inline probes and ptrace breakpoints, following
// threads, forks and execs, and merges, prunes, summarizes, diffs, exports
// and renders them offline.
package main

import (
	"os"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/cmd"
	"github.com/profile-dev/profile/internal/gvcache"
)

func main() {
	if os.Getenv(attach.WakerEnv) != "" {
		os.Exit(0) // a tracer's wake-up child: its end is the wake-up
	}
	gvcache.Restore()
	os.Exit(cmd.Execute())
}
