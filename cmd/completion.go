package cmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/export"
)

// Shell completion (profile completion bash|zsh|fish|powershell, cobra's):
// the values of enumerated flags, with a description each, and the files a
// command takes, filtered by extension. A value flag without a completion
// of its own completes nothing, unless its metavar is FILE: then any file.

// profileExt is the extension of profile files, as record writes them.
const profileExt = "data"

// pprofExts are the usual names of pprof files: profile export's .pb.gz,
// go test -cpuprofile's and pprof -proto's .pprof and .prof.
var pprofExts = []string{"pb.gz", "pprof", "prof"}

// fileArgs completes up to n file arguments (any number for n < 0) with
// the given extensions; once n are there, nothing more.
func fileArgs(n int, exts ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if n >= 0 && len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// profileArgs completes up to n profile files (any number for n < 0).
func profileArgs(n int) cobra.CompletionFunc { return fileArgs(n, profileExt) }

// completeFlag registers the completion of a flag of c. Failing means the
// flag is misnamed or registered twice: a mistake in this package.
func completeFlag(c *cobra.Command, flag string, f cobra.CompletionFunc) {
	if err := c.RegisterFlagCompletionFunc(flag, f); err != nil {
		panic(fmt.Sprintf("%s: %v", c.CommandPath(), err))
	}
}

// choices completes a flag of c with fixed values, each "name\tdescription"
// (cobra.CompletionWithDesc) or a bare name.
func choices(c *cobra.Command, flag string, values ...cobra.Completion) {
	completeFlag(c, flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// valueChoices are export's and render --flame's --value.
var valueChoices = []cobra.Completion{
	cobra.CompletionWithDesc(string(export.Self), "self time (ns)"),
	cobra.CompletionWithDesc(string(export.Calls), "calls"),
	cobra.CompletionWithDesc(string(export.Total), "total time (ns)"),
}

// completeTraceFlags completes the flags record, attach and top share.
func completeTraceFlags(c *cobra.Command) {
	choices(c, "probes",
		cobra.CompletionWithDesc(attach.ProbesAuto, "inline where a function can be patched safely, else trap"),
		cobra.CompletionWithDesc(attach.ProbesInline, "inline probes only"),
		cobra.CompletionWithDesc(attach.ProbesTrap, "breakpoints only"))
	completeFlag(c, "output", fileArgs(-1, profileExt))
}

// completePids lists the running processes, named by their command, for
// attach and top --pid; kernel threads are left out.
func completePids(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	var pids []cobra.Completion
	for _, e := range entries {
		pid := e.Name()
		if _, err := strconv.Atoi(pid); err != nil || pid == self || !strings.HasPrefix(pid, toComplete) {
			continue
		}
		comm, err := os.ReadFile("/proc/" + pid + "/comm")
		if err != nil {
			continue // gone meanwhile
		}
		if cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline"); len(cmdline) == 0 {
			continue // a kernel thread: nothing to trace
		}
		pids = append(pids, cobra.CompletionWithDesc(pid, strings.TrimSpace(string(comm))))
	}
	return pids, cobra.ShellCompDirectiveNoFileComp
}

// completeRest gives every value flag of c and its subcommands that has no
// completion yet one that offers nothing, except FILE flags (any file):
// a shell would offer file names for --top N or --pid PID.
func completeRest(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if metavar, _ := pflag.UnquoteUsage(f); metavar == "" || metavar == "FILE" {
			return
		}
		if _, ok := c.GetFlagCompletionFunc(f.Name); !ok {
			completeFlag(c, f.Name, cobra.NoFileCompletions)
		}
	})
	for _, sub := range c.Commands() {
		completeRest(sub)
	}
}
