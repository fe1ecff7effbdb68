package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what profile version prints.
type versionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	// Commit and Modified come from git when the binary was built in a
	// checkout (go build stamps them unless -buildvcs=false): absent
	// otherwise. Modified says the checkout had uncommitted changes.
	Commit   string `json:"commit,omitempty"`
	Modified *bool  `json:"modified,omitempty"`
}

// buildVersion reads the version of a binary from its build information
// (nil when the binary has none).
func buildVersion(version string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: version, Go: runtime.Version()}
	if bi == nil {
		return v
	}
	v.Go = bi.GoVersion
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if v.Commit != "" {
		v.Modified = &modified
	}
	return v
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
