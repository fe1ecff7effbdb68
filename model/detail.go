package model

// DetailTree is one call kept in detail (record --detail; docs/detail.md),
// with what was kept around it: the traced functions on its thread's stack
// when it ran (its ancestors, outermost first) and the kept calls inside it.
// Calls are in pre-order: a call's parent is the nearest earlier call one
// level up.
type DetailTree struct {
	Calls []DetailCall
}

// DetailCall is one call of a detail tree.
type DetailCall struct {
	Func    int
	Depth   int   // 0 for the tree's first (outermost) call
	StartNs int64 // entry, from the profile's start
	EndNs   int64 // exit, from the profile's start
	// Args are the integer argument registers at entry (rdi, rsi, rdx,
	// rcx, r8, r9) when DetailArgs is set; Ret is rax at the return when
	// DetailReturned is set.
	Args  [6]uint64
	Ret   uint64
	Flags DetailFlags
	// NArgs is how many of Args are the function's parameters, from its
	// debug information; -1 when unknown (all six shown).
	NArgs int
}

// DetailFlags say what a detail call is and what of it is known.
type DetailFlags uint8

const (
	// DetailKept: a selected function's call that met the rule (--slow,
	// --detail-if); calls without it are kept as ancestors.
	DetailKept DetailFlags = 1 << iota
	// DetailArgs: Args hold the call's argument registers.
	DetailArgs
	// DetailReturned: the call returned normally and Ret holds rax (not
	// set for a call left by longjmp, an exception or a tail call).
	DetailReturned
	// DetailOpen: still running when the profile was made; EndNs is then.
	DetailOpen
	// DetailInFlight: already running when tracing began; StartNs is then.
	DetailInFlight
)

// Has reports whether every flag of g is set in f.
func (f DetailFlags) Has(g DetailFlags) bool { return f&g == g }

// DetailRule is how the detail trees of a profile were selected.
type DetailRule struct {
	Funcs  string // regular expression on function names
	SlowNs int64  // a kept call lasted at least this long (0: any)
	If     string // condition on arguments or the return value ("" none)
	Limit  int    // trees kept per thread, the oldest dropped beyond
}

// RegisterInt reads a register as a C int when it holds one the way the
// compiler leaves it: a 32-bit move zeroes the upper half (mov eax, -3
// leaves 0x00000000fffffffd), a sign extension fills it with ones. Any
// other value (a pointer, a 64-bit number) is not one: ok is false. Shown
// values (profile trees, export) follow this one rule; an unsigned int of
// 2^31 or more thus reads negative.
func RegisterInt(v uint64) (n int32, ok bool) {
	hi := v >> 32
	return int32(v), hi == 0 || hi == 0xffffffff
}
