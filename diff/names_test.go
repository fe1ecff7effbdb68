package diff_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profile-dev/profile/diff"
	"github.com/profile-dev/profile/model/modeltest"
)

// The text and markdown tables shorten C++ names (names.Short) unless
// FullNames; JSON keeps them in full, and a gate's func~ scope matches the
// full name.
func TestNamesShortInTables(t *testing.T) {
	const (
		pushInt = "std::vector<int, std::allocator<int> >::push_back(int const&)"
		short   = "std::vector<…>::push_back"
	)
	res, err := diff.Compare(modeltest.Sample(), modeltest.CPP()) // every C++ function added
	must(t, err)
	gate, err := diff.ParseGate("func~int const&:self>+10%")
	must(t, err)
	out := func(format string, opt diff.Options) string {
		t.Helper()
		opt.Gates = []*diff.Gate{gate}
		rep, err := res.Report(opt)
		must(t, err)
		if len(rep.Breaches) != 1 || rep.Breaches[0].Function.Display != pushInt || rep.Breaches[0].Function.Short != short {
			t.Fatalf("breaches %+v, want push_back<int> alone", rep.Breaches)
		}
		write, _ := diff.Writer(format)
		var b bytes.Buffer
		must(t, write(&b, rep))
		return b.String()
	}
	for _, format := range []string{"text", "markdown"} {
		s := out(format, diff.Options{})
		if !strings.Contains(s, short) || strings.Contains(s, "std::allocator") || !strings.Contains(s, "libstdc++.so.6:operator new") ||
			strings.Contains(s, "unsigned long") {
			t.Errorf("%s: names not shortened:\n%s", format, s)
		}
		if !strings.Contains(s, "broken by 1") {
			t.Errorf("%s: the gate table does not say the gate broke:\n%s", format, s)
		}
		if s := out(format, diff.Options{FullNames: true}); !strings.Contains(s, pushInt) || strings.Contains(s, "<…>") {
			t.Errorf("%s with FullNames: names not in full:\n%s", format, s)
		}
	}
	for _, opt := range []diff.Options{{}, {FullNames: true}} {
		if s := out("json", opt); !strings.Contains(s, `"name": "std::vector<int, std::allocator<int> >::push_back(int const&)"`) ||
			strings.Contains(s, "…") {
			t.Errorf("JSON (%+v) without the full names:\n%s", opt, s)
		}
	}
}
