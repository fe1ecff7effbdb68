package attach

import "time"

// live is the progress reports' and checkpoint snapshots' state: when the
// next report is due, the checkpoint returns seen, and the time of the
// last one that took a snapshot (snapped: there was one).
type live struct {
	nextReport     time.Duration
	checkpoints    int64
	lastCheckpoint int64
	snapped        bool
}

// liveLoop reports progress and takes live snapshots on time and on
// request, whether or not the target stops: with inline probes a busy
// target may not stop for seconds, and an idle one never does. It ends
// when stop is closed.
func (e *engine) liveLoop(stop <-chan struct{}) {
	every := e.opt.Live.Every
	next := time.Now().Add(every)
	for {
		// Wake for the next snapshot, or the next progress line (four a
		// second), whichever comes first: nothing in between.
		wait := time.Hour
		if every > 0 {
			wait = time.Until(next)
		}
		if e.opt.Live.Progress != nil {
			wait = min(wait, 250*time.Millisecond)
		}
		timer := time.NewTimer(max(wait, 10*time.Millisecond))
		asked := false
		select {
		case <-timer.C:
		case <-e.opt.Live.Now:
			asked = true
		case <-stop:
		}
		timer.Stop()
		e.mu.Lock()
		if e.drainDone {
			e.mu.Unlock()
			return
		}
		if e.clock != nil {
			e.drainAll() // the snapshot and the numbers include every call so far
		}
		e.report()
		due := every > 0 && !time.Now().Before(next)
		if due {
			next = next.Add(every)
			if now := time.Now(); next.Before(now) {
				next = now.Add(every) // fell behind (a stopped machine): no burst
			}
		}
		if e.opt.Live.Snapshot != nil && (due || asked) && !e.detaching {
			e.snapshot()
		}
		e.mu.Unlock()
	}
}

// snapshot hands Options.Live.Snapshot the profile so far. The caller holds
// e.mu.
func (e *engine) snapshot() {
	e.opt.Live.Snapshot(e.compensated(e.profileNow()), e.liveStats())
}

// checkpointed takes a snapshot if the checkpoint function returned since
// the last look (now: the time of that return), at most once a second of
// the target's time. The caller holds e.mu.
func (e *engine) checkpointed(now int64) {
	c := e.s.Checkpoints()
	if c == e.checkpoints {
		return
	}
	e.checkpoints = c
	if e.opt.Live.Snapshot == nil || e.detaching || (e.snapped && now-e.lastCheckpoint < int64(time.Second)) {
		return
	}
	e.snapped, e.lastCheckpoint = true, now
	e.snapshot()
}
