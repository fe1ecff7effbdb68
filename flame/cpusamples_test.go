package flame_test

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/flame"
	"github.com/profile-dev/profile/model/modeltest"
)

// A flame graph draws measured times: the contexts CPU samples alone made
// (the counted hash's) are no frames, neither drawn nor counted as left
// out.
func TestCPUSampledFrames(t *testing.T) {
	_, doc := render(t, modeltest.CPUSampled(), flame.Options{})
	if got := doc.text("subtitle"); strings.Contains(got, "left out") {
		t.Errorf("subtitle %q", got)
	}
	var names []string
	for _, f := range doc.Frames {
		names = append(names, f.name())
		if f.name() == "hash" {
			t.Errorf("%v drawn", f.path)
		}
	}
	if len(doc.Frames) != 12 { // all, START and the 10 measured contexts of thread 100 and 101 merged
		t.Errorf("%d frames drawn, want 12: %v", len(doc.Frames), names)
	}
}
