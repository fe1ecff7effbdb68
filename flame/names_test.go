package flame_test

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/flame"
	"github.com/profile-dev/profile/model/modeltest"
)

const (
	pushInt   = "std::vector<int, std::allocator<int> >::push_back(int const&)"
	pushShort = "std::vector<…>::push_back"
)

// frameAt is the frame of path (function names from the frame under "all").
func frameAt(t *testing.T, doc svgDoc, path ...string) svgFrame {
	t.Helper()
	for _, f := range doc.Frames {
		if strings.Join(f.path, ";") == strings.Join(path, ";") {
			return f
		}
	}
	t.Fatalf("no frame %q", path)
	return svgFrame{}
}

// Frames show C++ names shortened (names.Short) unless FullNames; the
// tooltip, which Search matches, keeps the full name.
func TestNamesShortFrames(t *testing.T) {
	_, doc := render(t, modeltest.CPP(), flame.Options{})
	push := frameAt(t, doc, "main", pushInt)
	if push.Text != pushShort || push.N != pushShort || !strings.HasPrefix(push.Title, pushInt+"\nmodule cppapp\n") {
		t.Errorf("push_back frame: text %q, data-n %q, tooltip %q", push.Text, push.N, push.Title)
	}
	if f := frameAt(t, doc, "main", pushInt, "libstdc++.so.6:operator new(unsigned long)"); f.N != "libstdc++.so.6:operator new" {
		t.Errorf("operator new frame: data-n %q, want the module and the short name", f.N)
	}
	if f := frameAt(t, doc, "main"); f.Text != "main" || f.N != "" {
		t.Errorf("main frame: text %q, data-n %q; a name short already has no data-n", f.Text, f.N)
	}

	_, full := render(t, modeltest.CPP(), flame.Options{FullNames: true})
	for _, f := range full.Frames {
		if f.N != "" || strings.Contains(f.Text, "<…>") {
			t.Errorf("FullNames: frame %s shows %q (data-n %q)", f.name(), f.Text, f.N)
		}
	}
	// 382 px wide: the full name cut to fit
	if f := frameAt(t, full, "main", pushInt); !strings.HasPrefix(f.Text, "std::vector<int, std::allocator<int> >::push_back(") {
		t.Errorf("FullNames: push_back frame shows %q", f.Text)
	}
}

// In a browser a zoom refits the short names, and Search matches the
// full ones: "int const&" finds both push_back<int> frames (145 + 70 of
// 448 ns), "<…>" nothing.
func TestBrowserShortNames(t *testing.T) {
	svg, doc := render(t, modeltest.CPP(), flame.Options{})
	b := open(t, svg)
	main, push := frameAt(t, doc, "main"), frameAt(t, doc, "main", pushInt)
	b.click(main.ID)
	if s := b.eval(`document.querySelector("#` + push.ID + ` text").textContent`); s != pushShort {
		t.Errorf("after a zoom the push_back frame shows %q, want %q", s, pushShort)
	}
	for term, want := range map[string]string{"int const&": "Matched: 47.99%", "<…>": "Matched: 0.00%"} {
		if m := b.eval(`flame.search("` + term + `"); document.getElementById("matched").textContent`); m != want {
			t.Errorf("search %s: %q, want %q", term, m, want)
		}
	}
}
