package export

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/profile-dev/profile/internal/human"
	"github.com/profile-dev/profile/model"
)

// Pprof converts p to a pprof profile: one sample per CCT node (and per
// [pruned] frame) with the values calls (count), self and total
// (nanoseconds; total only where the model keeps it, on outermost
// activations, else 0), a "thread" label "tid name", one location per
// function and one mapping per module. Functions are named as summary
// names them (module:name for library functions), with the module's path
// as file name (no line numbers are known). self is the default sample
// type, so go tool pprof -top lists what summary lists; with opt.Busy, as
// summary does by default, busy times.
func Pprof(p *model.Profile, opt Options) (*profile.Profile, error) {
	if opt.Busy {
		p = p.Busy()
	}
	pp := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "calls", Unit: "count"},
			{Type: "self", Unit: "nanoseconds"},
			{Type: "total", Unit: "nanoseconds"},
		},
		DefaultSampleType: "self",
		PeriodType:        &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            1,
		TimeNanos:         p.Meta.StartUnixNs,
		DurationNanos:     p.Meta.DurationNs,
		Comments:          comments(p, opt.Busy),
	}
	mappings := make([]*profile.Mapping, len(p.Modules))
	for mi, m := range p.Modules {
		if mi == 0 {
			continue // START's empty module
		}
		mp := &profile.Mapping{ID: uint64(len(pp.Mapping) + 1), File: m.Path, BuildID: m.BuildID,
			HasFunctions: true}
		pp.Mapping = append(pp.Mapping, mp)
		mappings[mi] = mp
	}
	locs := make([]*profile.Location, len(p.Functions)+1) // the last: [pruned]
	location := func(f int) *profile.Location {
		if locs[f] != nil {
			return locs[f]
		}
		fn := &profile.Function{ID: uint64(len(pp.Function) + 1), Name: PrunedFrame, SystemName: PrunedFrame}
		var mp *profile.Mapping
		if f < len(p.Functions) {
			mod := p.Functions[f].Module
			fn.Name, fn.SystemName, fn.Filename = p.FuncName(f), p.Functions[f].Name, p.Modules[mod].Path
			mp = mappings[mod]
		}
		pp.Function = append(pp.Function, fn)
		loc := &profile.Location{ID: uint64(len(pp.Location) + 1), Mapping: mp, Line: []profile.Line{{Function: fn}}}
		pp.Location = append(pp.Location, loc)
		locs[f] = loc
		return loc
	}
	for ti := range p.Threads {
		t := &p.Threads[ti]
		label := map[string][]string{"thread": {strings.TrimSpace(strconv.Itoa(t.Tid) + " " + t.Name)}}
		stacks(t, func(s stack) {
			calls, self, total := s.values()
			sample := &profile.Sample{Value: []int64{calls, self, total}, Label: label}
			if s.pruned {
				sample.Location = append(sample.Location, location(len(p.Functions)))
			}
			for i := len(s.funcs) - 1; i >= 0; i-- { // leaf first
				sample.Location = append(sample.Location, location(s.funcs[i]))
			}
			pp.Sample = append(pp.Sample, sample)
		})
	}
	if err := pp.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof export: %w", err)
	}
	return pp, nil
}

// comments are the profile's command line, duration and other facts,
// and what its times are.
func comments(p *model.Profile, busy bool) []string {
	m := &p.Meta
	c := []string{"command: " + strings.Join(m.Command, " ")}
	c = append(c, fmt.Sprintf("duration: %s (%d ns)", human.Duration(m.DurationNs), m.DurationNs))
	if m.Mode != "" {
		c = append(c, "mode: "+m.Mode)
	}
	if m.Partial {
		c = append(c, "partial: "+m.PartialReason)
	}
	if m.Detached {
		c = append(c, "detached: the target went on running")
	}
	switch {
	case busy && m.CPUSamples != nil:
		c = append(c, "times: busy, from cpu samples: "+m.CPUSamples.String())
	case busy:
		c = append(c, "times: busy, measured (waiting calls' time left out)")
	case m.CPUSamples != nil:
		c = append(c, "times: wall, measured; cpu samples (not exported): "+m.CPUSamples.String())
	default:
		c = append(c, "times: wall, measured")
	}
	for _, w := range m.Warnings {
		c = append(c, "warning: "+w)
	}
	return c
}

// WritePprof writes p as a gzip-compressed profile.proto, as go tool
// pprof reads it.
func WritePprof(w io.Writer, p *model.Profile, opt Options) error {
	pp, err := Pprof(p, opt)
	if err != nil {
		return err
	}
	return pp.Write(w)
}
