package render

import (
	"slices"
	"testing"
)

func TestWrapName(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"main", []string{"main"}},
		{"exactly_forty_characters_long_name_xxxxx", []string{"exactly_forty_characters_long_name_xxxxx"}},
		// after a scope, the last one that fits
		{"long wide::Mod<0>::stage<3>(long)::helper_function_name", []string{"long wide::Mod<0>::stage<3>(long)::", "helper_function_name"}},
		// after a comma or an opening bracket
		{"std::map<std::basic_string<char>, std::vector<int>>::insert", []string{"std::map<std::basic_string<char>, std::", "vector<int>>::insert"}},
		{"std::map<std::basic_string<char>, unsigned long>::insert", []string{"std::map<std::basic_string<char>,", "unsigned long>::insert"}},
		{"libstdc++.so.6:operator new(unsigned long, std::nothrow_t const&)", []string{"libstdc++.so.6:operator new(unsigned", "long, std::nothrow_t const&)"}},
		// no break in the second half: cut at the width
		{"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz", []string{"abcdefghijklmnopqrstuvwxyzabcdefghijklmn", "opqrstuvwxyz"}},
		// runes, not bytes
		{"µµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµ", []string{"µµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµµ"}},
	} {
		if got := wrapName(c.name); !slices.Equal(got, c.want) {
			t.Errorf("wrapName(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestBoxSize(t *testing.T) {
	// 20 characters at 10 pt: 124 pt of text (1.72 in), 1.92 in with the margin
	if w := boxWidth([]string{"short", "twenty characters xx"}, 10); w < 1.92 || w > 1.93 {
		t.Errorf("boxWidth = %g", w)
	}
	if h := boxHeight([]string{"a"}, 10); h != 0.5 {
		t.Errorf("one line: height %g, want the 0.5 in minimum", h)
	}
	if h := boxHeight([]string{"a", "b", "c", "d"}, 18); h < 1.29 || h > 1.31 {
		t.Errorf("four lines at 18 pt: height %g", h)
	}
}
