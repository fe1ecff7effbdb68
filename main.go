// Command profile records exact per-thread call graphs of native Linux
// x86-64 programs with ptrace breakpoints, and merges, prunes, summarizes
// and renders them offline.
package main

import (
	"os"

	"github.com/profile-dev/profile/cmd"
	"github.com/profile-dev/profile/internal/gvcache"
)

func main() {
	gvcache.Restore()
	os.Exit(cmd.Execute())
}
