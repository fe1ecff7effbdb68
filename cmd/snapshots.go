package cmd

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/profile-dev/profile/attach"
	"github.com/profile-dev/profile/model"
)

// snapshotFiles writes the snapshots of a trace (--checkpoint,
// --snapshot-every, SIGUSR1) to OUT.1, OUT.2, ... on a goroutine of its
// own: the engine, which is held while it hands one off, only queues it.
// One that cannot be written is kept aside as the final profile is
// (keep.go).
type snapshotFiles struct {
	out   string
	w     io.Writer
	queue chan *model.Profile
	done  chan struct{}
	stop  func()
}

// startSnapshots starts the writer of record's and attach's snapshots
// (finishTrace closes it) and wires opt to it: --checkpoint,
// --snapshot-every, and SIGUSR1 asking for one.
func (f *traceFlags) startSnapshots(opt *attach.Options, w io.Writer) {
	opt.Live.Checkpoint, opt.Live.Every = f.checkpoint, f.snapEvery
	s := &snapshotFiles{out: f.out, w: w, queue: make(chan *model.Profile, 16), done: make(chan struct{})}
	f.snaps = s
	ask := make(chan struct{}, 1)
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	// validate refused the snapshot flags with these; SIGUSR1 is told.
	stream := isStream(f.out)
	go func() {
		for range usr1 {
			if stream {
				fmt.Fprintf(w, "profile: no snapshot: snapshots are written to FILE.1, FILE.2, ... beside -o FILE, and -o is %s\n",
					outName(f.out))
				continue
			}
			select {
			case ask <- struct{}{}:
			default: // one is asked for already
			}
		}
	}()
	s.stop = func() { signal.Stop(usr1) }
	opt.Live.Now = ask
	opt.Live.Snapshot = s.take
	go s.run()
}

// take queues a snapshot; with 16 queued it waits rather than lose one.
func (s *snapshotFiles) take(p *model.Profile, _ attach.Stats) {
	p.Meta.Partial = true
	p.Meta.PartialReason = "snapshot: tracing went on"
	s.queue <- p
}

func (s *snapshotFiles) run() {
	defer close(s.done)
	n := 0
	erase := ""
	if f, ok := s.w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		erase = "\r\033[K" // over the progress line
	}
	for p := range s.queue {
		n++
		name := fmt.Sprintf("%s.%d", s.out, n)
		at, err := saveOrKeep(nil, name, false, "", p)
		switch {
		case err == nil:
			fmt.Fprintf(s.w, "%sprofile: snapshot %s (%d calls)\n", erase, name, p.Meta.TracedCalls)
		case at != "":
			fmt.Fprintf(s.w, "%sprofile: snapshot: %v (%d calls)\n", erase, err, p.Meta.TracedCalls)
		default:
			fmt.Fprintf(s.w, "%sprofile: snapshot: %v\n", erase, err)
		}
	}
}

// close writes what is queued and stops taking requests.
func (s *snapshotFiles) close() {
	if s == nil {
		return
	}
	s.stop()
	close(s.queue)
	<-s.done
}
