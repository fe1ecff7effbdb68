package cmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/components"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/render"
)

var componentsWriters = map[string]func(io.Writer, *components.Report) error{
	"text":     components.WriteText,
	"table":    components.WriteText,
	"markdown": components.WriteMarkdown,
	"md":       components.WriteMarkdown,
	"json":     components.WriteJSON,
}

func newComponentsCmd() *cobra.Command {
	var (
		rulesPath, format, out string
		svg                    bool
		pid, tid               int
		timeKind               string
	)
	c := &cobra.Command{
		Use:   "components FILE",
		Short: "Time and calls per component: modules, or components named by entry functions",
		Long: `components groups the frames of every calling context into components
and prints their statistics: flat (calls into each component, self time,
total time counted once per outermost activation) and hierarchical (the tree
of component paths below START).

Without --rules a component is a module: the executable or a shared library.
--rules names components by their entry functions in a YAML file
(docs/components.md): an entry function starts its component, the functions
it calls belong to it until an entry function of another one; functions
before the first entry belong to Other.

--format text (the default), markdown or json write to standard output, or
to -o FILE. --svg draws the component tree (FILE.components.svg unless -o
names a file, - for standard output).`,
		Example: `  profile components profile.data
  profile components profile.data --rules components.yaml --format markdown
  profile components profile.data --rules components.yaml --svg`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: profileArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			write, ok := componentsWriters[strings.ToLower(format)]
			if !ok {
				return usagef("unknown --format %q: use text, markdown or json", format)
			}
			var err error
			switch {
			case svg:
				out, err = outputPath(args[0], out, "components.svg")
			case out == "":
				out = "-"
			default:
				out, err = outputPath(args[0], out, "")
			}
			if err != nil {
				return err
			}
			var rules *components.Rules
			if rulesPath != "" {
				data, err := os.ReadFile(rulesPath)
				if err != nil {
					return fmt.Errorf("--rules %s: %w", rulesPath, bare(err))
				}
				if rules, err = components.ParseRules(rulesPath, data); err != nil {
					return err
				}
			}
			if err := checkScope(pid, tid); err != nil {
				return err
			}
			busy, err := busyScope(timeKind)
			if err != nil {
				return err
			}
			p, err := readProfile(args[0])
			if err != nil {
				return err
			}
			if p, err = p.Only(model.Scope{Pid: pid, Tid: tid}); err != nil {
				return &usageError{err}
			}
			times := "wall"
			if busy {
				p, times = p.Busy(), "busy"
			}
			r, err := components.Compute(p, rules)
			if err != nil {
				return err
			}
			r.Times = times
			if !svg {
				return emit(c, out, func(w io.Writer) error { return write(w, r) })
			}
			title := "components of " + filepath.Base(args[0])
			if rulesPath != "" {
				title += " by " + filepath.Base(rulesPath)
			}
			data, err := render.SVG(cmp.Or(c.Context(), context.Background()), components.DOT(r, title))
			if err != nil {
				return err
			}
			return emitBytes(c, out, data)
		},
	}
	fl := c.Flags()
	fl.StringVar(&rulesPath, "rules", "", "name components by entry functions from the YAML `FILE` (default: one component per module)")
	fl.StringVar(&format, "format", "text", "output `FORMAT`: text, markdown or json")
	fl.BoolVar(&svg, "svg", false, "draw the component tree as SVG")
	fl.StringVar(&timeKind, "scope", "busy", "times of `KIND` busy (waiting calls' time left out, or the CPU samples' when recorded with them) or wall")
	scopeChoices(c)
	fl.IntVar(&pid, "pid", 0, "only process `PID`")
	fl.IntVar(&tid, "tid", 0, "only thread `TID`")
	c.MarkFlagsMutuallyExclusive("format", "svg")
	fl.StringVarP(&out, "output", "o", "", "write to `FILE`, - for standard output (default: standard output; with --svg FILE.components.svg)")
	completeFlag(c, "rules", fileArgs(-1, "yaml", "yml"))
	choices(c, "format",
		cobra.CompletionWithDesc("text", "aligned tables"),
		cobra.CompletionWithDesc("markdown", "Markdown tables"),
		cobra.CompletionWithDesc("json", "machine-readable"))
	return c
}
