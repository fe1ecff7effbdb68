package timeline

import "fmt"

// Offset formats a time from the profile's start in milliseconds with
// three decimals (microseconds, truncated), one unit for the whole column
// so that starts line up: "41.144 ms".
func Offset(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%03d ms", sign, ns/1e6, ns%1e6/1e3)
}

// Duration formats a duration as uftrace does, three decimals in the
// largest unit that keeps the value at least 1 (truncated): "20.312 ms",
// "1.250 µs", "812 ns", "1.520  s" (units two wide, so they line up).
func Duration(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%s%d ns", sign, ns)
	case ns < 1e6:
		return fmt.Sprintf("%s%d.%03d µs", sign, ns/1e3, ns%1e3)
	case ns < 1e9:
		return fmt.Sprintf("%s%d.%03d ms", sign, ns/1e6, ns%1e6/1e3)
	}
	return fmt.Sprintf("%s%d.%03d  s", sign, ns/1e9, ns%1e9/1e6)
}
