package diff

import (
	"fmt"
	"math"

	"github.com/profile-dev/profile/model"
)

// Colours by change, for drawings of a compared profile (render's call
// graph, the flame graph): red where a function's self time grew, blue
// where it shrank, by the change's share of the profile's time, not by
// its ratio: a reviewer asks what a change costs the run, and +7.49µs
// costs a one-second run nothing however small its base. Grey under
// Unchanged of the time, the default noise floor (DefaultNoise), so that
// what is grey is what diff leaves out; deeper on a log scale above it,
// full at FullShare, so that 0.1%, 1% and 10% of the run are three steps
// apart. A new or gone function is coloured by its time like any other.
const (
	Unchanged = 0.001 // share of the profile's time under which a change is grey
	FullShare = 0.1   // share of the deepest colour
)

// Grey is the colour of an unchanged function (or one the diff does not know).
const Grey = "#e0e0e0"

// Color returns the fill colour of a function that changed by f in a
// profile of scopeNs time (the drawn scope's), as "#rrggbb", and whether
// text on it should be white.
func Color(f Function, scopeNs int64) (fill string, whiteText bool) {
	share := math.Abs(float64(f.Self.Delta)) / float64(scopeNs)
	if scopeNs <= 0 || share < Unchanged {
		return Grey, false
	}
	depth := min(1, math.Log(share/Unchanged)/math.Log(FullShare/Unchanged))
	if f.Self.Delta < 0 {
		depth = -depth
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
// profiles (Grey for a function the diff does not know), of the larger
// profile's traced time: what a flame graph's frames are filled with.
func (r *Result) FuncColor(p *model.Profile, fn int) string {
	f, ok := r.Of(p, fn)
	if !ok {
		return Grey
	}
	fill, _ := Color(f, r.TracedNs())
	return fill
}

// TracedNs is the larger of the two profiles' traced times, the time the
// noise floor and the colours are shares of.
func (r *Result) TracedNs() int64 { return max(r.Base.TracedNs, r.New.TracedNs) }
