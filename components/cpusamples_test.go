package components_test

import (
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// Components add up measured times: a context CPU samples alone made (a
// counted function of another module, sampled below main) starts no
// component step.
func TestCPUSampledContexts(t *testing.T) {
	b := modeltest.NewBuilder("/bin/app")
	b.Period = 10
	pr := b.Process(1, model.None, "", 0)
	b.Thread(pr, 1, 0, "", 0, nil, []modeltest.Step{
		modeltest.Enter(10, "main"), modeltest.CPU(3, "libc.so.6:strlen"), modeltest.CPU(1, ""), modeltest.Exit(100),
	})
	b.Count(0, "main", "libc.so.6:strlen", 5)
	b.P.Meta.CPUSamples = &model.CPUSamples{PeriodNs: 10, Samples: b.Samples}
	if err := b.P.Validate(); err != nil {
		t.Fatal(err)
	}
	r := mustCompute(t, b.P, nil)
	checkAddsUp(t, "cpu sampled", b.P, r)
	for _, s := range r.Components {
		if s.Name == "libc.so.6" {
			t.Errorf("a component libc.so.6 with nothing measured: %+v", s)
		}
	}
	if len(r.Components) != 2 { // START, app
		t.Errorf("components %+v, want START and app", r.Components)
	}
}
