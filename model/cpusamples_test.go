package model_test

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/profile-dev/profile/merge"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/prune"
)

// cpuSampledProfiles are profiles with CPU samples in every place the
// file keeps them: nodes, member shares, and what prune folded away.
func cpuSampledProfiles(t *testing.T) map[string]*model.Profile {
	t.Helper()
	second := modeltest.CPUSampled()
	second.Processes[0].Pid = 2
	second.Meta.CPUSamples.PeriodNs = 20 // merged: mixed periods
	second.Meta.CPUSamples.NotSampled = "perf_event_open: permission denied"
	composite, err := merge.Merge(modeltest.CPUSampled(), second)
	if err != nil {
		t.Fatal(err)
	}
	pruned, err := prune.Prune(composite, prune.Options{Keep: regexp.MustCompile(`^fib$`)})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*model.Profile{
		"recorded":         modeltest.CPUSampled(),
		"composite":        composite,
		"pruned composite": pruned,
	}
}

// Sampled times and how they were sampled survive a write and a read.
func TestCPUSamplesRoundTrip(t *testing.T) {
	for name, p := range cpuSampledProfiles(t) {
		t.Run(name, func(t *testing.T) {
			if err := p.Validate(); err != nil {
				t.Fatalf("input invalid: %v", err)
			}
			if q := roundTrip(t, p); !reflect.DeepEqual(p, q) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", q, p)
			}
		})
	}
}

// Validate refuses each broken rule of the sampled times.
func TestValidateCPUSamples(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(p *model.Profile)
		want   string
	}{
		{"negative sampled time", func(p *model.Profile) { p.Threads[0].Nodes[1].SampledNs = -1 }, "negative value"},
		{"negative dropped sampled time", func(p *model.Profile) { p.Threads[1].Nodes[0].DroppedSampledNs = -1 }, "negative value"},
		{"shares do not add up", func(p *model.Profile) { p.Threads[0].Nodes[1].Contribs[0].SampledNs++ }, "do not add up to the node"},
		{"dropped shares do not add up", func(p *model.Profile) {
			p.Threads[1].Nodes[0].Contribs[0].DroppedSampledNs++
		}, "do not add up to the node"},
		{"negative samples", func(p *model.Profile) { p.Meta.CPUSamples.Samples = -1 }, "cpu samples: negative value"},
		{"negative lost", func(p *model.Profile) { p.Meta.CPUSamples.Lost = -1 }, "cpu samples: negative value"},
		{"negative in probes", func(p *model.Profile) { p.Meta.CPUSamples.InProbes = -1 }, "cpu samples: negative value"},
		{"negative period", func(p *model.Profile) { p.Meta.CPUSamples.PeriodNs = -1 }, "cpu samples: negative value"},
		{"kernel above samples", func(p *model.Profile) { p.Meta.CPUSamples.Kernel = p.Meta.CPUSamples.Samples + 1 }, "in the kernel of"},
		{"no period in a recording", func(p *model.Profile) {
			p.Meta.Mode = "record"
			p.Meta.CPUSamples.PeriodNs = 0
		}, "no sampling period"},
		{"sampled time without samples", func(p *model.Profile) { p.Meta.CPUSamples = nil }, "sampled times in a profile without CPU samples"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := cpuSampledProfiles(t)["pruned composite"]
			if err := p.Validate(); err != nil {
				t.Fatalf("valid before: %v", err)
			}
			c.break_(p)
			err := p.Validate()
			var ie *model.InvariantError
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ie) || ie.Measurement {
				t.Fatalf("Validate() = %v, want a structural %q", err, c.want)
			}
		})
	}
}

func TestCPUSamplesString(t *testing.T) {
	for _, c := range []struct {
		c    model.CPUSamples
		want string
	}{
		{model.CPUSamples{PeriodNs: 250_000, Samples: 12_345, Kernel: 100, InProbes: 395, WithKernel: true},
			"12,345 samples every 250µs (kernel too) — 3.10% in the probes' code"},
		{model.CPUSamples{PeriodNs: 1_000_000, Samples: 10, Lost: 2},
			"10 samples every 1.00ms (user mode only) — 0.00% in the probes' code, 2 lost"},
		{model.CPUSamples{Samples: 3, InProbes: 1, WithKernel: true, NotSampled: "some runs were not sampled"},
			"3 samples at mixed periods (kernel too) — 25.00% in the probes' code; some threads' times measured, not sampled: some runs were not sampled"},
	} {
		if got := c.c.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}
