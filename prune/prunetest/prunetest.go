// Package prunetest gives the offline packages' tests pruned profiles:
// modeltest's samples through prune, with nodes that carry dropped time
// and contexts re-attached to START. It lives apart from modeltest, which
// prune's own tests import.
package prunetest

import (
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/prune"
)

// Sample is modeltest.Sample pruned with opt; an error fails tb.
func Sample(tb testing.TB, opt prune.Options) *model.Profile {
	tb.Helper()
	p, err := prune.Prune(modeltest.Sample(), opt)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Pruned is modeltest.Sample pruned at 5% of self time.
func Pruned(tb testing.TB) *model.Profile {
	tb.Helper()
	return Sample(tb, prune.Options{Threshold: 0.05, Metric: prune.Self})
}

// Profiles are the exporters' test profiles by name: modeltest's sample
// and composite sample, and Pruned.
func Profiles() map[string]func(testing.TB) *model.Profile {
	return map[string]func(testing.TB) *model.Profile{
		"sample":    func(testing.TB) *model.Profile { return modeltest.Sample() },
		"composite": func(testing.TB) *model.Profile { return modeltest.SampleComposite() },
		"pruned":    Pruned,
	}
}
