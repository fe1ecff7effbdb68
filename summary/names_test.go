package summary_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

// The tables shorten C++ names (names.Short) unless FullNames; JSON and CSV
// carry them in full either way. Two instances of one template keep their
// own rows under one short name.
func TestNamesShortInTables(t *testing.T) {
	const (
		full    = "std::vector<int, std::allocator<int> >::push_back(int const&)"
		short   = "std::vector<…>::push_back"
		libFull = "libstdc++.so.6:operator new(unsigned long)"
		spawner = "std::thread::_M_start_thread(std::unique_ptr<std::thread::_State, std::default_delete<std::thread::_State> >, void (*)())"
	)
	out := func(r *summary.Report, w func(io.Writer, *summary.Report) error) string {
		var b bytes.Buffer
		must(t, w(&b, r))
		return b.String()
	}
	r := mustCompute(t, modeltest.CPP(), summary.Options{})
	rf := mustCompute(t, modeltest.CPP(), summary.Options{FullNames: true})

	shorts := 0
	for _, f := range r.Functions {
		if f.Display == short {
			shorts++
		}
	}
	if len(r.Functions) != 8 || shorts != 2 {
		t.Errorf("%d functions, %d shown as %s; want 8, two of them (int and long)", len(r.Functions), shorts, short)
	}
	if f := r.Functions[0]; f.Name != full || f.Display != short || rf.Functions[0].Display != full {
		t.Errorf("hottest function %q shown as %q (%q with full names), want %q as %q", f.Name, f.Display,
			rf.Functions[0].Display, full, short)
	}
	if p := r.HottestPath; len(p) != 3 || p[1].Display != short || p[2].Display != "libstdc++.so.6:operator new" {
		t.Errorf("hottest path %+v, want main, %s, libstdc++.so.6:operator new", p, short)
	}
	if p := rf.HottestPath; len(p) != 3 || p[1].Display != full || p[2].Display != libFull {
		t.Errorf("hottest path with full names %+v, want main, %s, %s", p, full, libFull)
	}
	if rc := r.Recursion; len(rc) != 1 || rc[0].Display != "tree<…>::visit" {
		t.Errorf("recursion %+v, want tree<…>::visit", rc)
	}

	for _, w := range []struct {
		name  string
		write func(io.Writer, *summary.Report) error
	}{{"table", summary.WriteTable}, {"markdown", summary.WriteMarkdown}} {
		s, sf := out(r, w.write), out(rf, w.write)
		if !strings.Contains(s, short) || strings.Contains(s, "std::allocator") || strings.Contains(s, "(int)") ||
			!strings.Contains(s, "std::thread::_M_start_thread") || strings.Contains(s, "_M_start_thread(") {
			t.Errorf("%s: names not shortened:\n%s", w.name, s)
		}
		if !strings.Contains(sf, full) || !strings.Contains(sf, spawner) || strings.Contains(sf, "<…>") {
			t.Errorf("%s --full-names: names not in full:\n%s", w.name, sf)
		}
	}
	for _, w := range []struct {
		name  string
		write func(io.Writer, *summary.Report) error
	}{{"json", summary.WriteJSON}, {"csv", summary.WriteCSV}} {
		s := out(r, w.write)
		if s != out(rf, w.write) {
			t.Errorf("%s differs with FullNames", w.name)
		}
		if !strings.Contains(s, "int const&") || !strings.Contains(s, "void (*)()") || strings.Contains(s, "<…>") {
			t.Errorf("%s: names not in full:\n%s", w.name, s)
		}
	}
}
