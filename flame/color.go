package flame

import (
	"fmt"
	"hash/fnv"
	"math"
)

// Colours are keyed by names, never by position or run, so that a function
// has the same colour in every graph: the main executable's functions are
// warm (red to yellow, as flamegraph.pl's "hot" palette), each library is a
// cool hue family chosen by its name, and a function's shade within its
// family comes from its name.

// libHues are the hue families of libraries, in degrees: blues, greens,
// aquas and purples, away from the executable's warm colours and from the
// search highlight's magenta.
var libHues = [...]float64{210, 120, 180, 265, 150, 235, 90, 195, 285}

// Fills of the frames that stand for no function.
const (
	allFill    = "rgb(200,200,200)"
	threadFill = "rgb(176,188,210)"
	startFill  = "rgb(190,190,190)"
	prunedFill = "rgb(228,228,228)"
)

// hash3 gives three numbers in [0, 1) from s.
func hash3(s string) (a, b, c float64) {
	h := fnv.New64a()
	h.Write([]byte(s))
	x := h.Sum64()
	part := func(shift uint) float64 { return float64((x>>shift)&0xffff) / 0x10000 }
	return part(0), part(16), part(32)
}

// mainColor is the colour of a function of the main executable.
func mainColor(name string) string {
	a, b, c := hash3(name)
	return fmt.Sprintf("rgb(%d,%d,%d)", 205+int(50*a), int(230*b), int(55*c))
}

// libColor is the colour of function name of library module.
func libColor(module, name string) string {
	m, _, _ := hash3(module)
	hue := libHues[int(m*float64(len(libHues)))]
	a, b, _ := hash3(name)
	r, g, bl := hslToRGB(hue+20*a-10, 0.45+0.2*b, 0.55+0.2*a)
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, bl)
}

// hslToRGB converts a colour from hue (degrees), saturation and lightness
// in [0, 1] to 8-bit RGB.
func hslToRGB(h, s, l float64) (r, g, b int) {
	h = math.Mod(h+360, 360) / 60
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h, 2)-1))
	var r1, g1, b1 float64
	switch int(h) {
	case 0:
		r1, g1 = c, x
	case 1:
		r1, g1 = x, c
	case 2:
		g1, b1 = c, x
	case 3:
		g1, b1 = x, c
	case 4:
		r1, b1 = x, c
	default:
		r1, b1 = c, x
	}
	m := l - c/2
	to8 := func(v float64) int { return int(math.Round(255 * (v + m))) }
	return to8(r1), to8(g1), to8(b1)
}
