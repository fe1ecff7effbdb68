package cmd

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// completionScripts are cobra's script writers by shell, and where each
// shell looks for the script.
var completionScripts = map[string]struct {
	write func(root *cobra.Command, w io.Writer, desc bool) error
	where string
}{
	"bash": {func(r *cobra.Command, w io.Writer, desc bool) error { return r.GenBashCompletionV2(w, desc) },
		"/etc/bash_completion.d/profile"},
	"zsh": {func(r *cobra.Command, w io.Writer, desc bool) error {
		if desc {
			return r.GenZshCompletion(w)
		}
		return r.GenZshCompletionNoDesc(w)
	}, `"${fpath[1]}/_profile"`},
	"fish": {func(r *cobra.Command, w io.Writer, desc bool) error { return r.GenFishCompletion(w, desc) },
		"~/.config/fish/completions/profile.fish"},
	"powershell": {func(r *cobra.Command, w io.Writer, desc bool) error {
		if desc {
			return r.GenPowerShellCompletionWithDesc(w)
		}
		return r.GenPowerShellCompletion(w)
	}, "profile.ps1"},
}

// setUpBuiltins gives cobra's help and completion commands examples and
// usage errors: as cobra makes them, "help nosuch" prints the root's help
// and "completion tcsh" the completion's, both with exit status 0.
func setUpBuiltins(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  profile help summary\n  profile help completion bash"
			c.Run = nil
			c.RunE = func(c *cobra.Command, args []string) error {
				target, rest, err := c.Root().Find(args)
				if err != nil || len(rest) > 0 {
					return usagef("unknown help topic %q: see profile help", strings.Join(args, " "))
				}
				target.InitDefaultHelpFlag() // listed in the help, as cobra's does
				return target.Help()
			}
		case "completion":
			var all []string
			for _, sh := range c.Commands() {
				script := completionScripts[sh.Name()]
				sh.Example = "  profile completion " + sh.Name() + " > " + script.where
				all = append(all, sh.Example)
				// cobra's own writes to the standard output it saw when
				// made, not to the command's (SetOut).
				sh.RunE = func(c *cobra.Command, _ []string) error {
					noDesc, _ := c.Flags().GetBool("no-descriptions")
					return script.write(c.Root(), c.OutOrStdout(), !noDesc)
				}
			}
			c.Example = strings.Join(all, "\n")
			// Runnable, so that cobra checks its arguments: no shell
			// prints the help, an unknown one is a usage error.
			c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		}
	}
}
