// Package instrument provides everything the ptrace tracer needs that does
// not itself touch a traced process: function symbols and PLT stubs of ELF
// files, /proc/PID/maps parsing and load biases, the function filter, the
// classification of the call that produced a return address, and the planner
// that decides how an instruction displaced by an int3 breakpoint is executed
// out of line.
//
// Addresses come in two flavours and every function says which one it takes:
// link-time addresses are those in the ELF file (st_value, p_vaddr); runtime
// addresses are where the code lives in the traced process. For ET_DYN files
// (shared objects and PIE executables) runtime = link-time + bias, see
// Module.Bias; for ET_EXEC files the bias is 0.
//
// The package is pure Go over files, byte slices and /proc text files, so all
// of it can be unit-tested without a tracee.
package instrument
