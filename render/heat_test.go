package render

import "testing"

func TestHeatStep(t *testing.T) {
	for _, c := range []struct {
		share, warm, hot float64
		want             int
	}{
		{0, 0.03, 0.10, 0},
		{0.0074, 0.03, 0.10, 0}, // under a quarter of warm
		{0.0075, 0.03, 0.10, 1},
		{0.029, 0.03, 0.10, 3},
		{0.03, 0.03, 0.10, 4}, // warm: the scale's middle
		{0.065, 0.03, 0.10, 5},
		{0.0999, 0.03, 0.10, 5},
		{0.10, 0.03, 0.10, 6}, // hot: red
		{0.40, 0.03, 0.10, 7},
		{0.70, 0.03, 0.10, 8},
		{1, 0.03, 0.10, 8},
		{0.5, 0.5, 0.5, 6},  // warm = hot
		{1, 0.2, 1, 8},      // hot 100%
		{0.01, 0, 0.10, 4},  // warm 0: everything at least orange
		{0.2, 0.25, 0.5, 3}, // thresholds moved
		{0.3, 0.25, 0.5, 4},
	} {
		if got := heatStep(c.share, c.warm, c.hot); got != c.want {
			t.Errorf("heatStep(%g, %g, %g) = %d, want %d", c.share, c.warm, c.hot, got, c.want)
		}
	}
	// only the two darkest fills take light text
	for step := range heatScale {
		if darkFill(step) != (step >= 7) {
			t.Errorf("step %d: dark %v", step, darkFill(step))
		}
	}
}

func TestFontSize(t *testing.T) {
	for _, c := range []struct{ share, max, want float64 }{
		{0, 0.5, 10}, {0.5, 0.5, 18}, {0.125, 0.5, 14}, {0.5, 0, 10}, {1, 0.5, 18},
	} {
		if got := fontSize(c.share, c.max); got != c.want {
			t.Errorf("fontSize(%g, %g) = %g, want %g", c.share, c.max, got, c.want)
		}
	}
}

func TestEdgeColor(t *testing.T) {
	for _, c := range []struct {
		share float64
		want  string
	}{{0, edgeGrey}, {0.029, edgeGrey}, {0.03, "#fc8d59"}, {0.5, "#b30000"}} {
		if got := edgeColor(c.share, 0.03, 0.10); got != c.want {
			t.Errorf("edgeColor(%g) = %s, want %s", c.share, got, c.want)
		}
	}
}
