package top

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/profile-dev/profile/model/modeltest"
)

// The table and the screen show C++ names shortened (names.Short) unless
// FullNames; the JSON lines, the filter and sort ties keep the full name.
func TestNamesShortInTable(t *testing.T) {
	const (
		pushInt  = "std::vector<int, std::allocator<int> >::push_back(int const&)"
		pushLong = "std::vector<long, std::allocator<long> >::push_back(long const&)"
		short    = "std::vector<…>::push_back"
	)
	p := modeltest.CPP()
	v := Compute(nil, p, Scope{}, Options{})
	if r := row(t, v, pushInt); r.Display != short || r.Calls != 2 || r.SelfNs != 175 {
		t.Errorf("push_back<int> row %+v, want %s, 2 calls, 175 ns self", r, short)
	}
	if r := row(t, v, "libstdc++.so.6:operator new(unsigned long)"); r.Display != "libstdc++.so.6:operator new" {
		t.Errorf("operator new shown as %q", r.Display)
	}
	// two rows under one short name, in the order of their full names
	Sort(v.Rows, ByName)
	var names []string
	for _, r := range v.Rows {
		if r.Display == short {
			names = append(names, r.Name)
		}
	}
	if len(names) != 2 || names[0] != pushInt || names[1] != pushLong {
		t.Errorf("rows shown as %s: %q", short, names)
	}
	if rows := Filter(v.Rows, regexp.MustCompile(`int const&`)); len(rows) != 1 || rows[0].Name != pushInt {
		t.Errorf("filter int const& keeps %+v", rows)
	}

	var table, lines bytes.Buffer
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(WriteTable(&table, Header{Pid: 300}, v, 0))
	must(WriteJSON(&lines, Header{Pid: 300}, v))
	if s := table.String(); !strings.Contains(s, short) || strings.Contains(s, "std::allocator") {
		t.Errorf("table not shortened:\n%s", s)
	}
	if s := lines.String(); !strings.Contains(s, `"name":"std::vector\u003cint, std::allocator\u003cint\u003e \u003e::push_back(int const\u0026)"`) ||
		strings.Contains(s, "…") {
		t.Errorf("JSON line without the full names:\n%s", s)
	}
	table.Reset()
	must(WriteTable(&table, Header{Pid: 300}, Compute(nil, p, Scope{}, Options{FullNames: true}), 0))
	if s := table.String(); !strings.Contains(s, pushLong) || strings.Contains(s, "<…>") {
		t.Errorf("FullNames: table not in full:\n%s", s)
	}

	// the screen: rows and the callers/callees panel
	scr := NewScreen(Actions{}, BySelf, Options{}, Tasks{})
	scr.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	scr.Update(SnapshotMsg{Profile: p, Header: Header{Pid: 300}})
	scr.Update(key("c")) // the first row: push_back<int>, 175 ns self
	s := scr.View()
	for _, want := range []string{"callers of " + short, "main", "run::{lambda#1}::operator()", "callees of " + short,
		"libstdc++.so.6:operator new"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "std::allocator") || strings.Contains(s, "(int)") {
		t.Errorf("screen not shortened:\n%s", s)
	}
	full := NewScreen(Actions{}, BySelf, Options{FullNames: true}, Tasks{})
	full.Update(tea.WindowSizeMsg{Width: 200, Height: 30})
	full.Update(SnapshotMsg{Profile: p, Header: Header{Pid: 300}})
	if s := full.View(); !strings.Contains(s, pushInt) {
		t.Errorf("FullNames: screen lacks %s:\n%s", pushInt, s)
	}
}
