package cmd

import (
	"context"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/attach"
)

func newAttachCmd() *cobra.Command {
	var f traceFlags
	var sel pidSelection
	c := &cobra.Command{
		Use:   "attach --pid PID[,PID...] [flags]",
		Short: "Trace a running process until Ctrl-C, then detach and save",
		Long: `attach traces every thread of a running process (and the threads and
children it creates) until Ctrl-C, SIGTERM, SIGHUP, --duration or the
process's exit; then it detaches, leaving the process running as before,
and writes the profile.

--pid takes several processes (-p 1,2,3, or -p repeated): one session, one
profile, each process with its threads. --tree takes each with every
descendant it has at that moment: a pre-forking server's master and its
workers. A process that ends while the others go on leaves its part in the
profile. A process with a parent but no "forked by" in the profile was
already running at attach.

Snapshots, each a complete profile of everything so far while tracing goes
on: SIGUSR1 to profile writes one, --checkpoint FUNC one each time FUNC
returns (at most one a second), --snapshot-every D one every D. They are
FILE.1, FILE.2, ... beside the output FILE.

A profile ended by a detach (Ctrl-C, --duration) is complete for its
window: info and summary say "detached", not "partial".

-o - writes the profile to the standard output (nothing else goes there);
-o /dev/null writes nothing. When FILE (or a snapshot) cannot be written (a
full disk, an I/O error), the profile is kept in a new file of $TMPDIR (or
/tmp) named after it, and a line on stderr says why and where. The exit
status is 0 when the profile was saved, to FILE or kept aside; 1 when it
could be saved nowhere, or tracing failed.`,
		Example: `  profile attach --pid 4242
  profile attach --pid 4242 --duration 10s -o server.data
  profile attach --pid 4242 --checkpoint handle_request -o server.data   # server.data.1, .2, ...
  profile attach --pid 4242 --tree --duration 10s   # a master and its worker processes`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, args []string) error {
			pids, err := sel.list("attach")
			if err != nil {
				return err
			}
			f.stdout = c.OutOrStdout()
			opt, err := f.options("attach", nil, pids[0])
			if err != nil {
				return err
			}
			opt.Tree = sel.tree
			if f.snapshotting() {
				// Snapshots are compensated too: measured before attaching.
				attach.PrepareCompensation(context.Background(), &opt)
			}
			f.startSnapshots(&opt, os.Stderr)
			ctx, done := f.traceContext(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
			defer done()
			r, err := attach.AttachAll(ctx, pids, opt)
			if err != nil {
				return err
			}
			return f.finishTrace(c, r)
		},
	}
	sel.register(c, "attach to")
	f.register(c)
	c.Flags().Lookup("output").Usage = "write the profile to `FILE`, - for the standard output (an existing file is kept as FILE.old; a device such as /dev/null is written straight)"
	f.registerAutoExpand(c)
	f.registerCounted(c)
	completeTraceFlags(c)
	return c
}
