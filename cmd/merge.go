package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/merge"
)

func newMergeCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "merge FILE...",
		Short: "Merge profiles into one composite profile, threads merged by nesting level",
		Long: `merge combines any number of profiles (runs) into one composite profile.
Functions are unified by module and name, never by address; all processes are
kept; the threads of every run with the same nesting level become one composite
thread whose calling contexts are merged by path of functions, keeping each
source thread's share (render --threads dissects edges by thread). Each input is
labelled by its file name; merging is associative and commutative, and merged
profiles can be merged again.`,
		Example: `  profile merge run1.data run2.data -o all.data
  profile merge runs/*.data`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: profileArgs(-1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkProfileOutput(c, out); err != nil {
				return err
			}
			runs := make([]merge.Run, 0, len(args))
			for _, path := range args {
				p, err := readProfile(path)
				if err != nil {
					return err
				}
				runs = append(runs, merge.Run{Name: path, Profile: p})
			}
			m, err := merge.MergeRuns(runs)
			if err != nil {
				return fmt.Errorf("merge: %w", err)
			}
			if err := writeDest(c.OutOrStdout(), out, true, profileWriter(m)); err != nil {
				return err
			}
			members := 0
			for _, t := range m.Threads {
				members += len(t.Members)
			}
			fmt.Fprintf(c.ErrOrStderr(), "profile: wrote %s (%d runs, %d processes, %d threads in %d levels)\n",
				outName(out), len(m.Meta.Sources), len(m.Processes), members, len(m.Threads))
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "merged.data", "write the composite profile to `FILE`, - for the standard output (an existing file is kept as FILE.old)")
	completeFlag(c, "output", fileArgs(-1, profileExt))
	return c
}
