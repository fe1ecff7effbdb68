package model

import "github.com/profile-dev/profile/internal/human"

// CPUSamples says how the traced threads' CPU time was sampled: a sample
// every PeriodNs of a thread's time on a CPU, each given to the calling
// context the probes' events say was running then (Node.SampledNs).
type CPUSamples struct {
	// PeriodNs is 0 only in a merge of runs sampled at different
	// periods.
	PeriodNs int64
	// Samples were given to contexts (Kernel of them taken in the
	// kernel, given to the context that made the system call);
	// InProbes fell in the probes' own code (their cost, given to no
	// context); Lost were dropped by the kernel.
	Samples  int64
	Kernel   int64
	InProbes int64
	Lost     int64
	// WithKernel: time in the kernel was sampled too (else user mode
	// only: perf_event_paranoid 2).
	WithKernel bool
	// NotSampled says why some threads could not be sampled ("" if
	// every thread was).
	NotSampled string
}

// BusySampled reports whether Busy takes its times from CPU samples
// (docs/design.md, Sampled times).
func (m *Meta) BusySampled() bool { return m.CPUSamples != nil }

// InProbesPct is the share, in percent, of the samples that fell in the
// probes' own code: what the probes cost the program's CPU time.
func (c *CPUSamples) InProbesPct() float64 {
	if all := c.Samples + c.InProbes; all > 0 {
		return 100 * float64(c.InProbes) / float64(all)
	}
	return 0
}

// String says how the samples were taken, for a reader: "12,345 samples
// every 250µs (kernel too) — 3.10% in the probes' code", with the samples
// lost and the threads not sampled when there are any.
func (c *CPUSamples) String() string {
	s := human.Count(c.Samples) + " samples"
	if c.PeriodNs > 0 {
		s += " every " + human.Duration(c.PeriodNs)
	} else {
		s += " at mixed periods"
	}
	if c.WithKernel {
		s += " (kernel too)"
	} else {
		s += " (user mode only)"
	}
	s += " — " + human.Percent(c.InProbesPct()) + " in the probes' code"
	if c.Lost > 0 {
		s += ", " + human.Count(c.Lost) + " lost"
	}
	if c.NotSampled != "" {
		s += "; some threads' times measured, not sampled: " + c.NotSampled
	}
	return s
}
