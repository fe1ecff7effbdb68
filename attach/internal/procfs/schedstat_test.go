package procfs

import "testing"

func TestParseSchedStat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want SchedDelta
		ok   bool
	}{
		{"1520361 29020 12\n", SchedDelta{1520361, 29020, 12}, true},
		{"0 0 0", SchedDelta{}, true},
		{"1520361 29020\n", SchedDelta{}, false},
		{"a b c\n", SchedDelta{}, false},
		{"", SchedDelta{}, false},
	} {
		got, ok := ParseSchedStat([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("ParseSchedStat(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
