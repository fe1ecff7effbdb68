package tables_test

import (
	"bytes"
	"testing"

	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/internal/tables"
)

func TestWrite(t *testing.T) {
	ts := []tables.Table{
		{Title: "Functions | by *self*", Header: []string{"function", "module", "self"},
			Kinds: []tables.Kind{tables.Symbol, tables.Text, tables.Number},
			Rows:  [][]string{{"ns::f<int>", "app", "1.23ms"}, {"a|b`c", "lib_x.so", "40ns"}, {"-", "-", "0ns"}},
			Note:  []tables.Span{{Text: "note on *this*: "}, {Text: "ns::f<int>", Symbol: true}, {Text: " from +1.20s"}}},
		{Title: "Empty", Header: []string{"x"}, Kinds: []tables.Kind{tables.Text}},
	}
	var txt, md bytes.Buffer
	if err := tables.WriteText(&txt, ts); err != nil {
		t.Fatal(err)
	}
	if err := tables.WriteMarkdown(&md, "Report <1>", ts); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tables.txt", txt.Bytes())
	golden.Check(t, "tables.md", md.Bytes())
}

func TestMarkdownEscapes(t *testing.T) {
	cases := []struct{ in, text, code string }{
		{"plain", "plain", "`plain`"},
		{"a_b*c", `a\_b\*c`, "`a_b*c`"},
		{"x|y", `x\|y`, "`x\\|y`"},
		{"tick`s", "tick\\`s", "`` tick`s ``"},
		{"`edge", "\\`edge", "`` `edge ``"},
		{"<T>", `\<T\>`, "`<T>`"},
	}
	for _, c := range cases {
		if got := tables.Escape(c.in); got != c.text {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := tables.Code(c.in); got != c.code {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.code)
		}
	}
}
