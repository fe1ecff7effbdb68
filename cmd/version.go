package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what profile version prints.
type versionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	// Commit and Modified come from git when the binary was built in a
	// checkout: absent otherwise. Modified says the checkout had
	// uncommitted changes. Go stamps the full commit (vcs.revision) where
	// it can; where it stamps none (a git worktree, whose .git is a file
	// Go does not take for a repository; GOFLAGS=-buildvcs=false), the
	// commit is read from the version the Makefile gives, a git describe
	// ("418afae", "v1.2-3-g418afae", "-dirty" when modified): abbreviated.
	Commit   string `json:"commit,omitempty"`
	Modified *bool  `json:"modified,omitempty"`
}

// buildVersion reads the version of a binary from its build information
// (nil when the binary has none), and its commit from version when the
// build information has none.
func buildVersion(version string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: version, Go: runtime.Version()}
	var modified bool
	if bi != nil {
		v.Go = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v.Commit == "" {
		v.Commit, modified = describedCommit(version)
	}
	if v.Commit != "" {
		v.Modified = &modified
	}
	return v
}

// described matches what git describe --tags --always --dirty prints: an
// abbreviated commit alone (no tag yet) or after a tag, its distance and
// "-g"; "-dirty" for uncommitted changes.
var described = regexp.MustCompile(`^(?:.+-[0-9]+-g)?([0-9a-f]{7,64})(-dirty)?$`)

// describedCommit is the commit named by a git describe version and
// whether the checkout had uncommitted changes; "" for another version
// (a tag alone names no commit here).
func describedCommit(version string) (string, bool) {
	m := described.FindStringSubmatch(version)
	if m == nil {
		return "", false
	}
	return m[1], m[2] != ""
}

func writeVersion(w io.Writer, v versionInfo) error {
	commit := ""
	if v.Commit != "" {
		commit = "\ncommit   " + v.Commit
		if *v.Modified {
			commit += " (modified)"
		}
	}
	_, err := fmt.Fprintf(w, "profile  %s\ngo       %s%s\n", v.Version, v.Go, commit)
	return err
}

func newVersionCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version of profile, the Go version and the git commit it was built from",
		Long: `version prints the version of profile (also profile --version), the Go
release it was built with and, for a build from a git checkout, the commit,
"(modified)" if the checkout had uncommitted changes.`,
		Example: `  profile version
  profile version --format json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usagef("unknown --format %q: use text or json", format)
			}
			bi, _ := debug.ReadBuildInfo()
			v := buildVersion(Version, bi)
			if format == "json" {
				e := json.NewEncoder(c.OutOrStdout())
				e.SetIndent("", "  ")
				return e.Encode(v)
			}
			return writeVersion(c.OutOrStdout(), v)
		},
	}
	c.Flags().StringVar(&format, "format", "text", "output `FORMAT`: text or json")
	choices(c, "format", "text", "json")
	return c
}
