package attach

import "time"

// liveLoop reports progress and takes live snapshots on time, whether or
// not the target stops: with inline probes a busy target may not stop for
// seconds, and an idle one never does.
func (e *engine) liveLoop() {
	every := e.opt.SnapshotEvery
	if every <= 0 {
		every = time.Second
	}
	next := time.Now().Add(every)
	for {
		// Wake for the next snapshot, or the next progress line (four a
		// second), whichever comes first: nothing in between.
		wait := time.Until(next)
		if e.opt.Progress != nil {
			wait = min(wait, 250*time.Millisecond)
		}
		time.Sleep(max(wait, 10*time.Millisecond))
		e.mu.Lock()
		if e.drainDone {
			e.mu.Unlock()
			return
		}
		if e.clock != nil {
			e.drainAll() // the snapshot and the numbers include every call so far
		}
		e.report()
		if e.opt.Snapshot != nil && !time.Now().Before(next) && !e.detaching {
			next = next.Add(every)
			if now := time.Now(); next.Before(now) {
				next = now.Add(every) // fell behind (a stopped machine): no burst
			}
			e.opt.Snapshot(e.compensated(e.s.Snapshot(e.now(), e.counters())), e.liveStats())
		}
		e.mu.Unlock()
	}
}
