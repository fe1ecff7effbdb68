package modeltest

import "github.com/profile-dev/profile/model"

// CPP is a small C++ program's profile with long demangled names, for the
// tests of name shortening (names.Short): two instances of one template
// member (one short name, two functions), a library operator called
// through the PLT, a recursive template, a lambda that is also the root of
// a thread started by std::thread::_M_start_thread.
func CPP() *model.Profile {
	const (
		pushInt   = "std::vector<int, std::allocator<int> >::push_back(int const&)"
		pushLong  = "std::vector<long, std::allocator<long> >::push_back(long const&)"
		opNew     = "libstdc++.so.6:operator new(unsigned long)"
		visit     = "tree<int>::visit(tree<int>::node*) const"
		lambda    = "run(int)::{lambda(int)#1}::operator()(int) const"
		startThrd = "std::thread::_M_start_thread(std::unique_ptr<std::thread::_State, std::default_delete<std::thread::_State> >, void (*)())"
	)
	b := NewBuilder("/bin/cppapp")
	p := b.Process(300, model.None, "", 0)
	b.Thread(p, 300, 0, "", 0, nil, []Step{
		Enter(10, "main"),
		Enter(5, pushInt), {Dt: 5, Func: opNew, Kind: model.KindPLT}, Exit(40), Exit(100),
		Enter(5, pushLong), Exit(60),
		Enter(5, visit), Enter(5, visit), Exit(20), Exit(30),
		Enter(5, lambda), Exit(15),
		Enter(5, startThrd), Exit(25),
		Exit(10),
	})
	b.Thread(p, 301, 300, startThrd, 1, nil, []Step{
		{Dt: 3, Func: lambda, Kind: model.KindIndirect}, Enter(2, pushInt), Exit(70), Exit(8),
	})
	return b.P
}
