package names

import "testing"

// The cases the golden corpora (real symbols) do not cover or that the
// package doc promises by name.
func TestShort(t *testing.T) {
	cases := []struct{ in, want string }{
		// Plain C and Go names are left alone.
		{"", ""},
		{"main", "main"},
		{"memcpy", "memcpy"},
		{"work.cold", "work.cold"},
		{"runtime.(*mheap).alloc", "runtime.(*mheap).alloc"},
		{"slices.Sort[go.shape.interface { Len() int }]", "slices.Sort[go.shape.interface { Len() int }]"},
		{"net(.text)", "net(.text)"},
		// Parameters and qualifiers go, operators stay whole.
		{"foo(int, std::string const&)", "foo"},
		{"ns::foo(int) const &&", "ns::foo"},
		{"ns::foo(int) volatile noexcept", "ns::foo"},
		{"ns::foo(int) [clone .isra.0] [clone .cold]", "ns::foo"},
		{"foo(...)", "foo"},
		{"S::operator()(int) const", "S::operator()"},
		{"S::operator()<int>(int) const", "S::operator()<…>"},
		{"operator<<(std::ostream&, S const&)", "operator<<"},
		{"operator<(S const&, S const&)", "operator<"},
		{"operator<=(S const&, S const&)", "operator<="},
		{"S::operator->() const", "S::operator->"},
		{"S::operator->*(int S::*)", "S::operator->*"},
		{"S::operator[](unsigned long)", "S::operator[]"},
		{"operator new[](unsigned long)", "operator new[]"},
		{"operator delete(void*, unsigned long)", "operator delete"},
		{"S::operator bool() const", "S::operator bool"},
		{"S::operator unsigned long() const", "S::operator unsigned long"},
		{"S::operator std::vector<int, std::allocator<int> >() const", "S::operator std::vector<…>"},
		{"S::operator (anonymous namespace)::T() const", "S::operator (anonymous namespace)::T"},
		{"S::operator int (*)(int)() const", "S::operator int (*)(int)"},
		{`operator"" _km(unsigned long long)`, `operator"" _km`},
		{"bool std::operator< <char>(std::string const&, char const*)", "std::operator< <…>"},
		{"bool std::operator==<char>(std::string const&, char const*)", "std::operator==<…>"},
		// Templates, return types and local entities.
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector<…>::push_back"},
		{"std::vector<int, std::allocator<int> >::~vector()", "std::vector<…>::~vector"},
		{"void std::sort<int*>(int*, int*)", "std::sort<…>"},
		{"unsigned long const& std::max<unsigned long>(unsigned long const&, unsigned long const&)", "std::max<…>"},
		{"decltype ((declval<int>)()) f<int>(int)", "f<…>"},
		{"void (*signal_like<int>(int))(int)", "signal_like<…>"},
		{"std::array<int, (4)>::size() const", "std::array<…>::size"},
		{"a::b<(1>2)>::c()", "a::b<…>::c"},
		{"f()::{lambda(int)#1}::operator()(int) const", "f::{lambda#1}::operator()"},
		{"f()::{lambda(int)#2}::operator()(int) const", "f::{lambda#2}::operator()"},
		{"f()::{lambda<typename $T0>($T0)#1}::operator()<int>(int) const", "f::{lambda<…>#1}::operator()<…>"},
		{"f()::{unnamed type#1}::g()", "f::{unnamed type#1}::g"},
		{"f(int)::counter", "f::counter"},
		{"(anonymous namespace)::helper(int)", "(anonymous namespace)::helper"},
		{"std::string::_M_data[abi:cxx11]() const", "std::string::_M_data"},
		{"non-virtual thunk to Derived::~Derived()", "non-virtual thunk to Derived::~Derived"},
		{"virtual thunk to std::basic_ostream<char, std::char_traits<char> >::~basic_ostream()", "virtual thunk to std::basic_ostream<…>::~basic_ostream"},
		{"guard variable for f()::x", "guard variable for f::x"},
		// Rust, legacy and v0 (as the demangler prints them).
		{"core::fmt::write::h0123456789abcdef", "core::fmt::write"},
		{"core::fmt::write::h0123456789abcdeg", "core::fmt::write::h0123456789abcdeg"},
		{"mycrate::run::{{closure}}", "mycrate::run::{{closure}}"},
		{"mycrate::run::{closure#0}", "mycrate::run::{closure#0}"},
		{"mycrate::run::{closure#1}", "mycrate::run::{closure#1}"},
		{"<Foo as core::fmt::Display>::fmt", "<Foo as core::fmt::Display>::fmt"},
		{"<mycrate::Foo<alloc::vec::Vec<u8>> as core::fmt::Display>::fmt", "<mycrate::Foo<…> as core::fmt::Display>::fmt"},
		{"<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop::h0123456789abcdef", "<alloc::vec::Vec<…> as core::ops::drop::Drop>::drop"},
		{"core::num::<impl u64>::unchecked_add", "core::num::<impl u64>::unchecked_add"},
		{"<core::option::Option<&str>>::map_or_else::<alloc::string::String, F>", "<core::option::Option<…>>::map_or_else::<…>"},
		{"core::ptr::drop_in_place::<alloc::string::String>", "core::ptr::drop_in_place::<…>"},
		{"mycrate::apply::<fn(i32) -> i32>", "mycrate::apply::<…>"},
		{"<[T] as alloc::slice::SpecCloneIntoVec<T,A>>::clone_into", "<[T] as alloc::slice::SpecCloneIntoVec<…>>::clone_into"},
		{"<&T as core::fmt::Debug>::fmt", "<&T as core::fmt::Debug>::fmt"},
		{"<() as std::process::Termination>::report", "<() as std::process::Termination>::report"},
		// Unbalanced input elides or copies the rest.
		{"a::b<c", "a::b<…>"},
		{"a::b(c", "a::b"},
		{"a::{lambda(int", "a::{lambda}"},
		{"a::b>c", "a::b>c"},
	}
	for _, c := range cases {
		got := Short(c.in)
		if got != c.want {
			t.Errorf("Short(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := Short(got); again != got {
			t.Errorf("Short(Short(%q)) = %q, not %q", c.in, again, got)
		}
	}
}

func TestShortMangled(t *testing.T) {
	cases := []struct {
		sym, want string
		ok        bool
	}{
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<…>::push_back", true},
		{"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write", true},
		{"_RNvCs1234_7mycrate3foo", "mycrate::foo", true},
		{"main", "main", false},
		{"_Z", "_Z", false},
	}
	for _, c := range cases {
		got, ok := ShortMangled(c.sym)
		if got != c.want || ok != c.ok {
			t.Errorf("ShortMangled(%q) = %q, %v, want %q, %v", c.sym, got, ok, c.want, c.ok)
		}
	}
}

// FuzzShort: no input panics Short or ShortMangled, and both results are
// fixed points of Short.
func FuzzShort(f *testing.F) {
	for _, s := range []string{
		"std::vector<int, std::allocator<int> >::push_back(int const&)",
		"app::run(std::vector<int>&)::{lambda(int)#1}::operator()(int) const",
		"S::operator int (*)(int)() const",
		"bool std::operator< <char>(std::string const&)",
		"<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold",
		"core::num::<impl u64>::unchecked_add::h0123456789abcdef",
		"_ZN3app3runERSt6vectorIiSaIiEE",
		"_RNvXs_Cs9ouqcdLKNTu_7mycrateNtB4_2SqNtB4_5Shape4area",
		"runtime.(*mheap).alloc",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		short := Short(s)
		if again := Short(short); again != short {
			t.Fatalf("Short(%q) = %q, but Short of that is %q", s, short, again)
		}
		if s != "" && short == "" {
			t.Fatalf("Short(%q) is empty", s)
		}
		if m, ok := ShortMangled(s); ok && Short(m) != m {
			again := Short(m)
			t.Fatalf("ShortMangled(%q) = %q, but Short of that is %q", s, m, again)
		}
	})
}
