package diff

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/profile-dev/profile/internal/human"
)

// The noise floor is the smallest change of time a report lists or a gate
// counts. Timings of two runs of one program differ by a little
// everywhere: a sampled function's time moves by whole sampling periods, a
// short one's by its call overhead. A change too small to matter to the
// run as a whole is not a regression, whatever its relative size (4ns →
// 1.28ms is +32080750%, and still nothing in a one-second run). So the
// default floor is a share of the run, DefaultNoise of the larger profile's
// traced time in scope (1ms in a one-second run): it scales with the
// workload where a fixed minimum would be too coarse for a short benchmark
// and too fine for a long one. A fixed time can be given instead, and 0
// lists and gates every change.
//
// The floor also says what a near-zero base is: a base value under it is
// indistinguishable from nothing, so its relative change is shown as
// "new" (or "~" when the new value is under the floor too), and a
// percentage gate takes it as an infinite growth, as for a new function.

// DefaultNoise is the --noise default.
const DefaultNoise = "0.1%"

// Noise is a noise floor: a share of the larger profile's traced time or
// a fixed time. The zero Noise is no floor.
type Noise struct {
	Pct float64 // percent of the traced time; used when Ns is 0
	Ns  int64   // a fixed floor
}

// ParseNoise reads a noise floor: a percentage of the traced time ("0.1%"),
// a duration ("100us", "2ms") or 0 for none.
func ParseNoise(s string) (Noise, error) {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, "%") {
		f, err := human.ParseFraction(t)
		if err != nil {
			return Noise{}, fmt.Errorf("noise floor: %w", err)
		}
		return Noise{Pct: 100 * f}, nil
	}
	if t == "0" {
		return Noise{}, nil
	}
	bad := fmt.Errorf("noise floor %q: give a percentage of the traced time (0.1%%), a time with its unit (100us) or 0", s)
	if r, _ := utf8.DecodeLastRuneInString(t); !unicode.IsLetter(r) {
		return Noise{}, bad
	}
	ns, err := human.ParseDuration(t)
	if err != nil || math.IsNaN(ns) || math.IsInf(ns, 0) || ns < 0 {
		return Noise{}, bad
	}
	return Noise{Ns: int64(math.Ceil(ns))}, nil
}

func (n Noise) String() string {
	if n.Ns > 0 {
		return human.Duration(n.Ns)
	}
	return human.Percent(n.Pct)
}

// floor is the noise floor in nanoseconds for the profiles base and new.
func (n Noise) floor(base, newer *Side) int64 {
	if n.Ns > 0 {
		return n.Ns
	}
	return int64(math.Ceil(n.Pct / 100 * float64(max(base.TracedNs, newer.TracedNs))))
}
