package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/attach"
)

func newRecordCmd() *cobra.Command {
	var f traceFlags
	c := &cobra.Command{
		Use:   "record [flags] -- CMD [ARGS...]",
		Short: "Run a command under the tracer and save its call graphs",
		Long: `record launches CMD traced from its first instruction, follows its threads
and forked children, writes the profile when it exits, and exits with CMD's
exit status (128+signal if a signal killed it). Ctrl-C reaches CMD as usual;
SIGTERM or SIGHUP to profile detaches and writes what was recorded.

Snapshots, each a complete profile of everything so far while tracing goes
on: SIGUSR1 to profile writes one, --checkpoint FUNC one each time FUNC
returns (at most one a second), --snapshot-every D one every D. They are
FILE.1, FILE.2, ... beside the output FILE.

A full or failing disk under FILE does not lose the recording: when FILE
(or a snapshot) cannot be written (a full disk, an I/O error), the profile
is kept in a new file of $TMPDIR (or /tmp) named after it, and a line on
stderr says why and where. The exit status is still CMD's, whether the profile was written,
kept aside or, when even that failed, lost (stderr says so). -o /dev/null
writes nothing; -o - is refused: CMD writes to the standard output.`,
		Example: `  profile record -- ./server --port 8080
  profile record --probes trap --duration 5s -- ./server
  profile record --filter '^parse' --lib libz.so.1 -- ./app input.txt
  profile record --stats --snapshot-every 10s -o long.data -- ./batch   # long.data.1, .2, ...`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opt, err := f.options("record", args, 0)
			if err != nil {
				return err
			}
			// Measured now, so that --duration times the tracing only.
			attach.PrepareCompensation(context.Background(), &opt)
			f.startSnapshots(&opt, os.Stderr)
			signalIgnoreInterrupt()
			ctx, done := f.traceContext(syscall.SIGTERM, syscall.SIGHUP)
			defer done()
			r, err := attach.Record(ctx, args, opt)
			if err != nil {
				return err
			}
			if err := f.finishTrace(c, r); err != nil {
				// Lost: said, but the exit status stays the program's.
				fmt.Fprintf(c.ErrOrStderr(), "profile: %v\n", err)
			}
			if !r.Exited && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// --duration ended the trace, not the program: it runs on
				// untraced, and its exit status is still ours to give.
				fmt.Fprintf(c.ErrOrStderr(), "profile: stopped tracing after %s; %s (pid %d) runs on untraced, waiting for it to exit\n",
					f.duration, args[0], r.Pid)
				if r.ExitCode, r.Signal, err = attach.WaitExit(r.Pid); err != nil {
					return err
				}
			}
			switch {
			case r.Signal != 0:
				return &exitError{128 + int(r.Signal)}
			case r.ExitCode != 0:
				return &exitError{r.ExitCode}
			}
			return nil
		},
	}
	f.register(c)
	f.registerAutoExpand(c)
	f.registerCounted(c)
	completeTraceFlags(c)
	c.Flags().SetInterspersed(false)
	return c
}
