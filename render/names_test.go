package render_test

import (
	"context"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/render"
)

// Node labels shorten C++ names (names.Short) unless FullNames; the
// tooltip keeps the full name. Two instances of one template stay two
// nodes, in the order of their full names.
func TestNamesShortLabels(t *testing.T) {
	p := modeltest.CPP()
	dot := mustDOT(t, p, render.Options{})
	for label, tooltip := range map[string]string{
		"libstdc++.so.6:operator new":      "operator new(unsigned long)\\nmodule /lib/libstdc++.so.6\\n",
		"tree<…>::visit":                   "tree<int>::visit(tree<int>::node*) const\\n",
		"run::{lambda#1}::operator() [L1]": "run(int)::{lambda(int)#1}::operator()(int) const\\nmodule /bin/cppapp\\nfirst function",
		"std::thread::_M_start_thread":     "std::thread::_M_start_thread(std::unique_ptr<std::thread::_State, std::default_delete<std::thread::_State> >, void (*)())\\n",
	} {
		if l := nodeLine(t, dot, label); !strings.Contains(l, `tooltip="`+tooltip) {
			t.Errorf("node %s: tooltip not %q:\n%s", label, tooltip, l)
		}
	}
	var push []string
	for _, l := range strings.Split(string(dot), "\n") {
		if strings.Contains(l, `[label="std::vector<…>::push_back\n`) {
			push = append(push, l)
		}
	}
	if len(push) != 2 || !strings.Contains(push[0], `tooltip="std::vector<int, std::allocator<int> >::push_back(int const&)\n`) ||
		!strings.Contains(push[1], `tooltip="std::vector<long, std::allocator<long> >::push_back(long const&)\n`) {
		t.Errorf("want two push_back nodes, int then long, with their full names as tooltips:\n%s", strings.Join(push, "\n"))
	}

	full := mustDOT(t, p, render.Options{FullNames: true})
	if strings.Contains(string(full), "<…>") {
		t.Errorf("FullNames: a shortened name in\n%s", full)
	}
	nodeLine(t, full, "std::vector<int, std::allocator<int> >::") // wrapped after "::"
	nodeLine(t, full, "libstdc++.so.6:operator new(unsigned")

	svg, err := render.SVG(context.Background(), dot)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`>std::vector&lt;…&gt;::push_back</text>`,
		`xlink:title="std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back(int const&amp;)&#10;module /bin/cppapp&#10;`} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}
