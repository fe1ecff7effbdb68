package model

import (
	"cmp"
	"fmt"
	"slices"
)

// FormatOffset formats a time from the profile's start (Meta.StartUnixNs)
// in seconds with two decimals, rounded: "+1.20s". Info and summary show
// Function.TracedSinceNs with it.
func FormatOffset(ns int64) string {
	sign := "+"
	if ns < 0 {
		sign, ns = "-", -ns
	}
	cs := (ns + 5e6) / 1e7 // centiseconds, rounded half up
	return fmt.Sprintf("%s%d.%02ds", sign, cs/100, cs%100)
}

// TracedLater returns the functions whose tracing began after the
// profile's start (TracedSinceNs > 0, record --auto-expand), by that time,
// then by FuncName.
func (p *Profile) TracedLater() []int {
	var fs []int
	for f := range p.Functions {
		if p.Functions[f].TracedSinceNs > 0 {
			fs = append(fs, f)
		}
	}
	slices.SortFunc(fs, func(a, b int) int {
		return cmp.Or(cmp.Compare(p.Functions[a].TracedSinceNs, p.Functions[b].TracedSinceNs),
			cmp.Compare(p.FuncName(a), p.FuncName(b)))
	})
	return fs
}
