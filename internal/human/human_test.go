package human

import (
	"math"
	"testing"
)

func TestDuration(t *testing.T) {
	cases := map[int64]string{
		0: "0ns", 7: "7ns", 999: "999ns", 1000: "1.00µs", 1234: "1.23µs", 12345: "12.3µs",
		123456: "123µs", 999_499: "999µs", 999_500: "1.00ms", 999_999: "1.00ms", 1_234_567: "1.23ms",
		9_995_000: "10.0ms", 99_950_000: "100ms", 1_000_000_000: "1.00s", 12_345_000_000: "12.3s",
		4_567_000_000_000: "4567s", -1500: "-1.50µs",
	}
	for ns, want := range cases {
		if got := Duration(ns); got != want {
			t.Errorf("Duration(%d) = %q, want %q", ns, got, want)
		}
		back, err := ParseDuration(Duration(ns))
		if err != nil || math.Abs(back-float64(ns)) > 0.005*math.Abs(float64(ns))+0.5 {
			t.Errorf("ParseDuration(%q) = %v, %v", Duration(ns), back, err)
		}
	}
}

func TestParseFraction(t *testing.T) {
	good := map[string]float64{"10%": 0.10, "3%": 0.03, " 2.5 % ": 0.025, "0.1": 0.1, "0": 0, "100%": 1, "1": 1}
	for s, want := range good {
		if got, err := ParseFraction(s); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseFraction(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "%", "abc", "10%%", "-1%", "101%", "5", "NaN", "Inf"} {
		if _, err := ParseFraction(s); err == nil {
			t.Errorf("ParseFraction(%q) succeeded", s)
		}
	}
}

// FuzzParseFraction: ParseFraction (render --hot, --warm) never panics and
// accepts only fractions in [0, 1].
func FuzzParseFraction(f *testing.F) {
	for _, s := range []string{"10%", "0.1", " 2.5 % ", "0", "1", "100%", "-1%", "101%", "NaN", "Inf", "%", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseFraction(s)
		if err != nil {
			return
		}
		if !(v >= 0 && v <= 1) {
			t.Fatalf("ParseFraction(%q) = %v", s, v)
		}
	})
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {123456, "123,456"}, {1234567, "1,234,567"}, {-1234, "-1,234"}} {
		if got := Count(c.n); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
