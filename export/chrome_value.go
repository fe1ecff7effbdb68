package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/profile-dev/profile/model"
)

// micros is a time in nanoseconds written as the format's microseconds,
// with the nanoseconds as decimals.
type micros int64

func at(ns int64) *micros { m := micros(ns); return &m }

func (m micros) MarshalJSON() ([]byte, error) { return []byte(formatMicros(int64(m))), nil }

// formatMicros writes ns in microseconds, exactly ("1234.5" for 1234500
// ns) unless a reader would then take it for the nanosecond below:
// Perfetto multiplies the number it parsed by 1000 and truncates, and
// 1.001 µs parses to a double a hair under it. The complete events of a
// thread nest to the nanosecond (a call and its caller often end in the
// same one), and a reader drops a child that seems to outlast its
// parent, so such a time gets a tenth of a nanosecond more ("1.0011"),
// which every reader takes for the right nanosecond.
func formatMicros(ns int64) string {
	s := exactMicros(ns)
	if readsAs(s) == ns {
		return s
	}
	whole, frac, _ := strings.Cut(s, ".")
	t := whole + "." + (frac + "000")[:3] + "1"
	if readsAs(t) == ns {
		return t
	}
	return s
}

func exactMicros(ns int64) string {
	sign, u := "", uint64(ns)
	if ns < 0 {
		sign, u = "-", -u
	}
	s := sign + strconv.FormatUint(u/1000, 10)
	if f := u % 1000; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%03d", f), "0")
	}
	return s
}

// readsAs is the nanosecond the readers take a written time for, or -1
// when they differ: a correctly rounded parse (jsoncpp, browsers) and
// Perfetto's own, which adds the decimals' value to the integer part;
// both times 1000, truncated.
func readsAs(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	a, b := int64(f*1000), int64(perfettoFloat(s)*1000)
	if a != b {
		return -1
	}
	return a
}

// perfettoFloat parses a decimal as Perfetto's JSON parser does (no
// exponent: the writer never uses one). The conversions keep each step
// rounded as in C, not fused into a multiply-add.
func perfettoFloat(s string) float64 {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var out float64
	for _, d := range whole {
		out = float64(out*10) + float64(d-'0')
	}
	if frac != "" {
		var f, div float64 = 0, 1
		for _, d := range frac {
			f = float64(f*10) + float64(d-'0')
			div = float64(div * 10)
		}
		out += float64(f / div)
	}
	if neg {
		return -out
	}
	return out
}

// register is an argument register or rax as an event argument: a C int
// (model.RegisterInt) as a number, as profile trees shows it; any other
// value as its bits in hex, which keeps pointers readable and exact where a
// JSON reader would round a number beyond 2^53, with its reading as a
// negative long when it is one.
func register(v uint64) any {
	if n, ok := model.RegisterInt(v); ok {
		return int64(n)
	}
	s := fmt.Sprintf("%#x", v)
	if int64(v) < 0 {
		s += fmt.Sprintf(" (%d)", int64(v))
	}
	return s
}
