package diff

import (
	"fmt"
	"math"

	"github.com/profile-dev/profile/model"
)

// Colours by change, for drawings of a compared profile (render's call
// graph, the flame graph): red where a function's self time grew, blue
// where it shrank, the deeper the larger the change, grey where it moved
// by less than Unchanged. Depth follows the ratio new/base on a log scale,
// so that twice as slow and twice as fast are equally deep, and full depth
// is reached at FullRatio either way. A new function is full red, a gone
// one full blue.
const (
	Unchanged = 0.01 // relative change under which a function is grey
	FullRatio = 2.0  // ratio new/base (or base/new) of the deepest colour
)

// Grey is the colour of an unchanged function (or one the diff does not know).
const Grey = "#e0e0e0"

// Color returns the fill colour of a function that changed by f, as
// "#rrggbb", and whether text on it should be white.
func Color(f Function) (fill string, whiteText bool) {
	d := f.Self
	var depth float64
	switch {
	case f.Status == Added || d.Base == 0 && d.New > 0:
		depth = 1
	case f.Status == Removed || d.New == 0 && d.Base > 0:
		depth = -1
	case d.Base == 0 || math.Abs(d.RelPct) < 100*Unchanged:
		return Grey, false
	default:
		depth = math.Log(float64(d.New)/float64(d.Base)) / math.Log(FullRatio)
		depth = max(-1, min(1, depth))
	}
	// from a pale tint at depth 0 to the full colour at depth 1
	pale, full := [3]float64{255, 228, 228}, [3]float64{200, 0, 0}
	if depth < 0 {
		pale, full, depth = [3]float64{228, 236, 255}, [3]float64{0, 60, 200}, -depth
	}
	var c [3]int
	for i := range c {
		c[i] = int(math.Round(pale[i] + (full[i]-pale[i])*depth))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2]), depth > 0.55
}

// FuncColor returns the colour of function fn of p, one of the compared
// profiles (Grey for a function the diff does not know): what a flame
// graph's frames are filled with.
func (r *Result) FuncColor(p *model.Profile, fn int) string {
	f, ok := r.Of(p, fn)
	if !ok {
		return Grey
	}
	fill, _ := Color(f)
	return fill
}
