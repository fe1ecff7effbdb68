package model_test

import (
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestShortFuncName(t *testing.T) {
	p := modeltest.CPP()
	if err := p.Validate(); err != nil {
		t.Fatalf("modeltest.CPP: %v", err)
	}
	byName := map[string]int{}
	for f, fn := range p.Functions {
		byName[fn.Name] = f
	}
	for _, c := range []struct {
		name, full, short string
	}{
		{model.StartName, "START", "START"},
		{"main", "main", "main"},
		{"std::vector<int, std::allocator<int> >::push_back(int const&)",
			"std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector<…>::push_back"},
		{"std::vector<long, std::allocator<long> >::push_back(long const&)",
			"std::vector<long, std::allocator<long> >::push_back(long const&)", "std::vector<…>::push_back"},
		// the module prefix of a library function stays
		{"operator new(unsigned long)", "libstdc++.so.6:operator new(unsigned long)", "libstdc++.so.6:operator new"},
		{"tree<int>::visit(tree<int>::node*) const", "tree<int>::visit(tree<int>::node*) const", "tree<…>::visit"},
		{"run(int)::{lambda(int)#1}::operator()(int) const", "run(int)::{lambda(int)#1}::operator()(int) const",
			"run::{lambda#1}::operator()"},
	} {
		f, ok := byName[c.name]
		if !ok {
			t.Fatalf("no function %q in modeltest.CPP", c.name)
		}
		if got := p.FuncName(f); got != c.full {
			t.Errorf("FuncName(%q) = %q, want %q", c.name, got, c.full)
		}
		if got := p.ShortFuncName(f); got != c.short {
			t.Errorf("ShortFuncName(%q) = %q, want %q", c.name, got, c.short)
		}
		if got := p.DisplayName(f, false); got != c.short {
			t.Errorf("DisplayName(%q, short) = %q, want %q", c.name, got, c.short)
		}
		if got := p.DisplayName(f, true); got != c.full {
			t.Errorf("DisplayName(%q, full) = %q, want %q", c.name, got, c.full)
		}
	}
	// C names, the sample's, come back unchanged
	s := modeltest.Sample()
	for f := range s.Functions {
		if full, short := s.FuncName(f), s.ShortFuncName(f); full != short {
			t.Errorf("sample function %d: ShortFuncName %q, FuncName %q", f, short, full)
		}
	}
}
