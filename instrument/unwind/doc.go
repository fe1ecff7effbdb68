// Package unwind walks the native stack of a stopped x86-64 thread: from the
// thread's registers and a way to read its memory it recovers, frame by
// frame, the pc, the canonical frame address (CFA) and the return address.
// The attach tracer uses the frames to rebuild the activations of traced
// functions that were already running when it attached: such an activation
// entered with rsp = CFA-8, where its return address lies.
//
// The call frame information comes from each module's .eh_frame, which this
// package parses itself (CIEs, FDEs, pointer encodings, the CFA programs and
// the DWARF expressions they may contain). Where no FDE covers a pc the
// unwinder falls back to the frame-pointer chain.
//
// Limits: only the general registers and rip are tracked, and a frame
// starts with just the callee-saved ones (Regs), so CFI that computes the
// CFA or the return address from a scratch register (longjmp and context
// switching code) ends the walk; so does a frame-pointer fallback through
// code that uses rbp as a general register. .debug_frame is not read.
//
// Addresses follow package instrument's convention: link-time addresses are
// those in the ELF file; runtime = link-time + bias. Everything here is pure
// Go over files and a Memory callback, so it is tested without ptrace.
package unwind
