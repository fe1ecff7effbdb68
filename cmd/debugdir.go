package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/instrument"
)

// debugDirEnv sets the debug directory when --debug-dir does not.
const debugDirEnv = "PROFILE_DEBUG_DIR"

// registerDebugDir adds --debug-dir to c, into dir: where the separate
// debug files of stripped modules are looked for.
func registerDebugDir(c *cobra.Command, dir *string) {
	c.Flags().StringVar(dir, "debug-dir", "", "look for the debug files of stripped modules under `DIR` (DIR/.build-id/xx/yyyy.debug, and DIR plus the module's directory for its .gnu_debuglink); default $"+debugDirEnv+", else "+instrument.DefaultDebugDir)
	completeFlag(c, "debug-dir", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
}

// debugSearch finds the debug files of stripped modules: under dir
// (--debug-dir), $PROFILE_DEBUG_DIR or /usr/lib/debug, then from the
// debuginfod servers of $DEBUGINFOD_URLS, cached under the user's cache
// directory. Each debug file refused is said once on w.
func debugSearch(dir string, w io.Writer) *instrument.DebugSearch {
	if dir == "" {
		dir = os.Getenv(debugDirEnv)
	}
	if dir == "" {
		dir = instrument.DefaultDebugDir
	}
	return &instrument.DebugSearch{
		Dir:        dir,
		Debuginfod: instrument.NewDebuginfod(os.Getenv("DEBUGINFOD_URLS"), debuginfodCache()),
		Warn:       func(msg string) { fmt.Fprintf(w, "profile: %s\n", msg) },
	}
}

// debuginfodCache is $XDG_CACHE_HOME/profile/debuginfod, else
// ~/.cache/profile/debuginfod (a temporary directory without a home).
func debuginfodCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "profile", "debuginfod")
}

// planCacheEnv names the directory of the plan cache, or "off".
const planCacheEnv = "PROFILE_PLAN_CACHE"

// planCacheDir is where the plans read from modules' instructions are
// kept between sessions (attach.Options.PlanCache): $PROFILE_PLAN_CACHE,
// else $XDG_CACHE_HOME/profile/plans (~/.cache/profile/plans); "" when
// $PROFILE_PLAN_CACHE is "off" or there is no cache directory.
func planCacheDir() string {
	switch v := os.Getenv(planCacheEnv); v {
	case "off":
		return ""
	case "":
		dir, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(dir, "profile", "plans")
	default:
		return v
	}
}
