package cmd

import (
	"syscall"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/attach"
)

func newAttachCmd() *cobra.Command {
	var f traceFlags
	var pid int
	c := &cobra.Command{
		Use:   "attach --pid PID [flags]",
		Short: "Trace a running process until Ctrl-C, then detach and save",
		Long: `attach traces every thread of a running process (and the threads and
children it creates) until Ctrl-C, SIGTERM, SIGHUP, --duration or the
process's exit; then it detaches, leaving the process running as before,
and writes the profile.`,
		Example: `  profile attach --pid 4242
  profile attach --pid 4242 --duration 10s -o server.data
  profile attach --pid 4242 --filter '^handle_' --lib libssl.so.3`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, args []string) error {
			if pid <= 0 {
				return usagef("attach needs --pid PID")
			}
			opt, err := f.options("attach", nil)
			if err != nil {
				return err
			}
			ctx, done := f.traceContext(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
			defer done()
			r, err := attach.Attach(ctx, pid, opt)
			if err != nil {
				return err
			}
			return f.finishTrace(c, r)
		},
	}
	c.Flags().IntVarP(&pid, "pid", "p", 0, "attach to the process `PID`")
	f.register(c)
	completeFlag(c, "pid", completePids)
	completeTraceFlags(c)
	return c
}
