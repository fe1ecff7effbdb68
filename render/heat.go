package render

import "math"

// The heat scale: nine steps from pale to dark red (ColorBrewer's OrRd),
// by a node's self share. Warm and Hot place the scale's middle and its
// red end: below Warm the four pale steps, from Warm the two orange ones,
// from Hot the three reds, deeper as the share approaches the whole.
var heatScale = [...]string{
	"#fff7ec", "#fee8c8", "#fdd49e", "#fdbb84", // below Warm
	"#fc8d59", "#ef6548", // Warm to Hot
	"#d7301f", "#b30000", "#7f0000", // Hot and above
}

// hotStep is the first step of the hot tier.
const hotStep = 6

// Colours of waiting and of plain edges.
const (
	waitFill = "#c6d4e1" // blue-grey: blocked in a waiting call
	waitLine = "#5d7790"
	edgeGrey = "#8c8c8c"
)

// heatStep is the step of the heat scale of a self share. The steps
// start at the shares the legend shows (heatSwatches); eps keeps a share
// right at one of them from falling below it by rounding.
func heatStep(share, warm, hot float64) int {
	const eps = 1e-9
	switch {
	case share >= hot:
		if hot >= 1 {
			return len(heatScale) - 1
		}
		return hotStep + min(2, int(3*(share-hot)/(1-hot)+eps))
	case share >= warm:
		return 4 + min(1, int(2*(share-warm)/(hot-warm)+eps))
	case warm <= 0 || share <= 0:
		return 0
	default:
		return min(3, int(4*share/warm+eps))
	}
}

// HeatFill is the fill of a box with a self share (0..1) on the heat
// scale of warm and hot, as a DOT attribute list: other drawings of a
// profile (components) colour their boxes as the call graph does.
func HeatFill(share, warm, hot float64) string {
	step := heatStep(share, warm, hot)
	attrs := `fillcolor="` + heatScale[step] + `"`
	if darkFill(step) {
		attrs += ", fontcolor=white"
	}
	return attrs
}

// darkFill reports whether a step is dark enough to need light text:
// only the two darkest reds; every other fill takes dark text.
func darkFill(step int) bool { return step >= 7 }

// fontSize grows a node's font with its self share, relative to the
// largest drawn (as pprof does): 10 pt to 18 pt.
func fontSize(share, maxShare float64) float64 {
	if maxShare <= 0 || share <= 0 {
		return 10
	}
	return math.Round(10 + 8*math.Sqrt(min(1, share/maxShare)))
}

// edgeColor is a call edge's colour: grey below Warm, then the heat
// scale's orange and red (never its pale steps, which would vanish on
// white).
func edgeColor(share, warm, hot float64) string {
	if share < warm {
		return edgeGrey
	}
	return heatScale[heatStep(share, warm, hot)]
}
