// Package human formats and parses the numbers people read: durations with
// three significant digits and percentages.
package human

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var units = []struct {
	name  string
	scale int64
}{{"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}

// Duration formats a time in nanoseconds with three significant digits
// (rounded half up) and the largest unit that keeps the value at least 1:
// 0ns, 999ns, 1.23µs, 12.3µs, 123µs, 1.23ms, 1.23s, 123s, 4567s.
func Duration(ns int64) string {
	neg := ""
	if ns < 0 {
		neg, ns = "-", -ns
	}
	if ns < 1000 {
		return neg + strconv.FormatInt(ns, 10) + "ns"
	}
	for i, u := range units {
		last := i == len(units)-1
		if !last && ns >= units[i+1].scale {
			continue
		}
		for dec, div := 2, u.scale/100; dec >= 0; dec, div = dec-1, div*10 {
			q := (ns + div/2) / div // value in units of 10^-dec
			if q >= 1000 && dec > 0 {
				continue // one digit more before the point
			}
			if q >= 1000 && !last {
				return neg + "1.00" + units[i+1].name // 999.6µs rounds to 1.00ms
			}
			if dec == 0 {
				return neg + strconv.FormatInt(q, 10) + u.name
			}
			p := int64(math.Pow10(dec))
			return neg + fmt.Sprintf("%d.%0*d", q/p, dec, q%p) + u.name
		}
	}
	panic("unreachable")
}

// ParseDuration reads a value written by Duration (or a plain number of
// nanoseconds) back into nanoseconds.
func ParseDuration(s string) (float64, error) {
	s = strings.TrimSpace(s)
	scale := 1.0
	switch {
	case strings.HasSuffix(s, "ns"):
		s = strings.TrimSuffix(s, "ns")
	case strings.HasSuffix(s, "µs"):
		s, scale = strings.TrimSuffix(s, "µs"), 1e3
	case strings.HasSuffix(s, "us"):
		s, scale = strings.TrimSuffix(s, "us"), 1e3
	case strings.HasSuffix(s, "ms"):
		s, scale = strings.TrimSuffix(s, "ms"), 1e6
	case strings.HasSuffix(s, "s"):
		s, scale = strings.TrimSuffix(s, "s"), 1e9
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	return v * scale, nil
}

// Percent formats a percentage (0-100) with two decimals: "12.34%".
func Percent(pct float64) string {
	return strconv.FormatFloat(pct, 'f', 2, 64) + "%"
}

// ParseFraction reads a threshold given as a percentage ("10%", "2.5%")
// or as a fraction ("0.1") and returns the fraction, in [0, 1].
func ParseFraction(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a percentage (like 10%%) or a fraction (like 0.1)", s)
	}
	if pct {
		v /= 100
	}
	if v < 0 || v > 1 {
		if pct {
			return 0, fmt.Errorf("%q is out of range: a percentage must be between 0%% and 100%%", s)
		}
		return 0, fmt.Errorf("%q is out of range: give a percentage (like 10%%) or a fraction between 0 and 1", s)
	}
	return v, nil
}

// Count formats a count with thousands separators: 1,234,567.
func Count(n int64) string {
	if n < 0 {
		return "-" + Count(-n)
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
