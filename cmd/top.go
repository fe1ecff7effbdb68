package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/top"
)

func newTopCmd() *cobra.Command {
	var (
		f         traceFlags
		sel       pidSelection
		interval  time.Duration
		format    string
		sortBy    string
		rows      int
		fullNames bool
		timeKind  string
	)
	c := &cobra.Command{
		Use:   "top --pid PID[,PID...] [flags]",
		Short: "A live view of a running process: exact calls/s and times per function",
		Long: `top attaches to a running process and shows, refreshed every --interval,
each traced function's calls per second, self and total time in the last
interval, its share of the traced time, the threads calling it, and its
calls and self time since attach. The header names the process, its
threads, the call rate, the probe kinds, the profiler's own CPU use and
the times shown.

Times are busy time (--scope busy, the default, as summary's): the time
inside waiting calls (sleeps, I/O, locks, condition variables) is left
out, so that an idle thread's nanosleep or pthread_cond_wait never tops
the table. --scope wall shows the measured times, waiting included.

The thread list (T on the screen, a second table or the JSON "threads"
piped) shows every thread of the target: its name (/proc's comm), its CPU
use over the interval (/proc's utime+stime, in % of one CPU), its busy and
traced time and calls per second in the interval.

Keys: < > sort column, up/down select, t one thread at a time, T the
thread list (enter shows the selected thread's functions), c callers and
callees of the selected function, / filter by regex, p pause, s save a
snapshot (OUT.1, OUT.2, ...), q quit: detach, leaving the process running
as before, and write the profile to -o.

Piped (standard output not a terminal), top prints a plain table and a
thread table every interval instead, or with --format json one JSON object
per line holding the interval's numbers (summed over the lines, the calls
equal the final profile's); the last line, "final": true, covers the time
up to detach.

C++ and Rust names are shortened ("std::vector<…>::push_back"); JSON has
them in full, and the / filter matches the full names. --full-names shows
them whole.`,
		Example: `  profile top --pid 4242
  profile top --pid 4242 --sort calls/s --interval 2s -o server.data
  profile top --pid 4242 --scope wall
  profile top --pid 4242 --format json --duration 30s | jq .calls_per_sec`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, _ []string) error {
			pids, err := sel.list("top")
			if err != nil {
				return err
			}
			pid := pids[0]
			if interval < 100*time.Millisecond {
				return usagef("--interval %s: at least 100ms", interval)
			}
			col, ok := top.ParseColumn(sortBy)
			if !ok {
				return usagef("unknown --sort %q: calls/s, self, total, calls, self-all or name", sortBy)
			}
			if format != "text" && format != "json" {
				return usagef("unknown --format %q: text or json", format)
			}
			if rows < 0 {
				return usagef("bad --rows %d: must not be negative", rows)
			}
			busy, err := busyScope(timeKind)
			if err != nil {
				return err
			}
			if f.snapshotting() {
				return usagef("--checkpoint and --snapshot-every write snapshots of record and attach; top shows its own every --interval")
			}
			if f.detail != "" {
				return usagef("--detail records call trees into the profile of record and attach; top shows no trees")
			}
			if f.out == stdoutPath {
				return usagef("-o -: top shows its view on the standard output: give -o FILE")
			}
			opt, err := f.options("attach", nil, pid)
			if err != nil {
				return err
			}
			opt.Tree = sel.tree
			// The live views are compensated: measured before attaching.
			attach.PrepareCompensation(context.Background(), &opt)
			opt.Live.Progress = nil // the view shows the numbers
			opt.Live.Every = interval
			snaps := make(chan snapshot, 1)
			opt.Live.Snapshot = func(p *model.Profile, s attach.Stats) {
				// The newest wins: never hold the engine for a slow reader.
				select {
				case <-snaps:
				default:
				}
				snaps <- snapshot{p, s}
			}
			ctx, done := f.traceContext(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
			defer done()
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			s := &topSession{f: &f, pid: pid, sort: col, rows: rows, opt: top.Options{FullNames: fullNames, Wall: !busy},
				snaps: snaps, ended: make(chan traceEnd, 1)}
			// The first interval's CPU% is measured from before attach.
			before := s.tasks(pids)
			go func() {
				r, err := attach.AttachAll(ctx, pids, opt)
				s.ended <- traceEnd{r, err}
			}()
			if format == "text" && isatty.IsTerminal(os.Stdout.Fd()) && isatty.IsTerminal(os.Stdin.Fd()) {
				return s.screen(c, cancel, before)
			}
			return s.lines(c, format, before)
		},
	}
	fl := c.Flags()
	sel.register(c, "watch")
	fl.DurationVar(&interval, "interval", time.Second, "refresh every `D`")
	fl.StringVar(&format, "format", "text", "piped output `FORMAT`: text (a table per interval) or json (an object per line)")
	fl.StringVar(&sortBy, "sort", "self", "sort by `COLUMN`: calls/s, self, total, calls, self-all or name")
	fl.IntVar(&rows, "rows", 25, "piped text: the first `N` functions of each table (0: all)")
	fl.BoolVar(&fullNames, "full-names", false, "show function names in full (json always does; the filter matches them)")
	fl.StringVar(&timeKind, "scope", "busy", "times of `KIND` busy (waiting calls' time left out) or wall (measured, waiting included)")
	f.register(c)
	c.Flags().MarkHidden("checkpoint")
	c.Flags().MarkHidden("snapshot-every")
	for _, name := range []string{"detail", "slow", "detail-if", "detail-limit"} {
		c.Flags().MarkHidden(name)
	}
	scopeChoices(c)
	choices(c, "format",
		cobra.CompletionWithDesc("text", "a table per interval"),
		cobra.CompletionWithDesc("json", "an object per line"))
	choices(c, "sort",
		cobra.CompletionWithDesc("calls/s", "calls per second in the interval"),
		cobra.CompletionWithDesc("self", "self time in the interval"),
		cobra.CompletionWithDesc("total", "total time in the interval"),
		cobra.CompletionWithDesc("calls", "calls since attach"),
		cobra.CompletionWithDesc("self-all", "self time since attach"),
		cobra.CompletionWithDesc("name", "function name"))
	completeTraceFlags(c)
	return c
}

type snapshot struct {
	p *model.Profile
	s attach.Stats
}

type traceEnd struct {
	r   *attach.Result
	err error
}

// topSession is one run of top: the snapshots as they come, then the end.
type topSession struct {
	f     *traceFlags
	pid   int
	sort  top.Column
	rows  int
	opt   top.Options
	snaps chan snapshot
	ended chan traceEnd
	cpu   cpuMeter
	saved int
	// tasksErr is the first failure to read the threads from /proc, said
	// once; the screen's snapshots are read beside the screen.
	tasksMu   sync.Mutex
	tasksErr  error
	tasksSaid bool
}

// tasks reads the threads of processes pids from /proc; a failure leaves
// out what could not be read, and is remembered to be said once.
func (s *topSession) tasks(pids []int) top.Tasks {
	t, err := top.ReadTasks("/proc", pids)
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	if err != nil && s.tasksErr == nil {
		s.tasksErr = err
	}
	return t
}

// snapshot is a snapshot of the profile p with the threads of its
// processes.
func (s *topSession) snapshot(p *model.Profile) *top.Snapshot {
	return top.NewSnapshot(p, s.tasks(processPids(p)))
}

// processPids are the pids of p's processes.
func processPids(p *model.Profile) []int {
	pids := make([]int, len(p.Processes))
	for i, pr := range p.Processes {
		pids[i] = pr.Pid
	}
	return pids
}

// sayTasksErr says the first failure to read the threads, once.
func (s *topSession) sayTasksErr() {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	if s.tasksErr != nil && !s.tasksSaid {
		fmt.Fprintf(os.Stderr, "profile: top: the thread list lacks threads: %v\n", s.tasksErr)
		s.tasksSaid = true
	}
}

// header describes the profile p and the engine's numbers s; final: p is
// the profile after detach.
func (s *topSession) header(p *model.Profile, st attach.Stats, final bool) top.Header {
	h := top.Header{Pid: s.pid, Threads: st.Threads, Processes: st.Processes, InlineFunctions: st.Probes.Inline,
		TrapFunctions: st.Probes.Trap, TracerCPU: s.cpu.share(), Final: final}
	if len(p.Processes) > 0 {
		h.Exe = filepath.Base(p.Processes[0].Exe)
	}
	return h
}

// save writes a snapshot beside the output: OUT.1, OUT.2, ...
func (s *topSession) save(p *model.Profile) (string, error) {
	if isDevice(s.f.out) {
		return "", fmt.Errorf("snapshots are written to OUT.1, OUT.2, ... beside -o OUT, and -o is the device %s", s.f.out)
	}
	s.saved++
	path := fmt.Sprintf("%s.%d", s.f.out, s.saved)
	return path, writeOutput(path, false, profileWriter(p))
}

// finish saves the final profile and says what was written.
func (s *topSession) finish(c *cobra.Command, e traceEnd) error {
	if e.err != nil {
		return e.err
	}
	return s.f.finishTrace(c, e.r)
}

// screen runs the full-screen view until q (or the target's end).
func (s *topSession) screen(c *cobra.Command, quit func(), before top.Tasks) error {
	scr := top.NewScreen(top.Actions{Quit: quit, Save: s.save}, s.sort, s.opt, before)
	// The rows change once an interval: ten frames a second keep keys
	// snappy without waking the profiler sixty times a second.
	prog := tea.NewProgram(scr, tea.WithAltScreen(), tea.WithFPS(10))
	go func() {
		for {
			select {
			case sn := <-s.snaps:
				prog.Send(top.SnapshotMsg{Profile: sn.p, Tasks: s.tasks(processPids(sn.p)),
					Header: s.header(sn.p, sn.s, false)})
			case end := <-s.ended:
				s.ended <- end // for finish, below
				prog.Send(top.DoneMsg{Text: "detached"})
				return
			}
		}
	}()
	_, err := prog.Run()
	quit() // the screen can end first (a closed terminal): detach anyway
	end := <-s.ended
	if err != nil {
		fmt.Fprintf(os.Stderr, "profile: top: terminal: %v\n", err)
	}
	s.sayTasksErr()
	return s.finish(c, end)
}

// lines writes a table or a JSON line per snapshot, then the final one.
func (s *topSession) lines(c *cobra.Command, format string, before top.Tasks) error {
	w := c.OutOrStdout()
	prev := &top.Snapshot{Tasks: before}
	write := func(p *model.Profile, h top.Header) error {
		cur := s.snapshot(p)
		s.sayTasksErr()
		v := top.Refresh(prev, cur, top.Scope{}, s.opt)
		top.Sort(v.Rows, s.sort)
		prev = cur
		if format == "json" {
			return top.WriteJSON(w, h, v)
		}
		return top.WriteTable(w, h, v, s.rows)
	}
	for {
		select {
		case sn := <-s.snaps:
			if err := write(sn.p, s.header(sn.p, sn.s, false)); err != nil {
				return writeErr(err)
			}
		case end := <-s.ended:
			if end.err != nil {
				return end.err
			}
			// A snapshot taken just before the end comes first.
			select {
			case sn := <-s.snaps:
				if err := write(sn.p, s.header(sn.p, sn.s, false)); err != nil {
					return writeErr(err)
				}
			default:
			}
			if err := write(end.r.Profile, s.header(end.r.Profile, end.r.Stats, true)); err != nil {
				return writeErr(err)
			}
			return s.finish(c, end)
		}
	}
}

// writeErr is a failed write of the view: a closed pipe ends top quietly.
func writeErr(err error) error {
	if errors.Is(err, syscall.EPIPE) {
		return &exitError{code: 1}
	}
	return fmt.Errorf("top: %w", err)
}

// cpuMeter measures the profiler's CPU use between two readings.
type cpuMeter struct {
	cpu  time.Duration
	wall time.Time
}

// share is the CPU time used since the last reading over the wall time,
// in CPUs.
func (m *cpuMeter) share() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	now := time.Now()
	var s float64
	if !m.wall.IsZero() {
		if dt := now.Sub(m.wall); dt > 0 {
			s = float64(cpu-m.cpu) / float64(dt)
		}
	}
	m.cpu, m.wall = cpu, now
	return s
}
