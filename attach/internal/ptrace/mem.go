package ptrace

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReadMem reads len(buf) bytes at addr with one process_vm_readv.
func ReadMem(pid int, addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	local := unix.Iovec{Base: &buf[0]}
	local.SetLen(len(buf))
	remote := unix.RemoteIovec{Base: uintptr(addr), Len: len(buf)}
	r, _, e := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(pid),
		uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0)
	n := int(r)
	if e != 0 {
		return fmt.Errorf("read %d bytes at %#x in %d: %w", len(buf), addr, pid, e)
	}
	if n != len(buf) {
		return fmt.Errorf("read %d bytes at %#x in %d: short read (%d)", len(buf), addr, pid, n)
	}
	return nil
}

// WriteMem writes buf at addr with one process_vm_writev (writable
// mappings only: the stack, the out-of-line area).
func WriteMem(pid int, addr uint64, buf []byte) error {
	faultPoint()
	if len(buf) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMWritev(pid, local, remote, 0)
	if err != nil {
		return fmt.Errorf("write %d bytes at %#x in %d: %w", len(buf), addr, pid, err)
	}
	if n != len(buf) {
		return fmt.Errorf("write at %#x in %d: short write", addr, pid)
	}
	return nil
}

// WriteMemv writes each of bufs at its address of addrs (writable
// mappings only), many to a process_vm_writev.
func WriteMemv(pid int, addrs []uint64, bufs [][]byte) error {
	return memv(pid, addrs, bufs, true)
}

// ReadMemv reads each of bufs from its address of addrs, many to a
// process_vm_readv.
func ReadMemv(pid int, addrs []uint64, bufs [][]byte) error {
	return memv(pid, addrs, bufs, false)
}

// maxIov is the most iovecs one process_vm_readv or _writev takes
// (IOV_MAX).
const maxIov = 1024

// memv moves bufs to (write) or from their addresses in pid, maxIov
// pieces to a system call.
func memv(pid int, addrs []uint64, bufs [][]byte, write bool) error {
	verb, vm := "read", unix.ProcessVMReadv
	if write {
		verb, vm = "write", unix.ProcessVMWritev
	}
	for len(addrs) > 0 {
		if write {
			faultPoint()
		}
		n := min(len(addrs), maxIov)
		local := make([]unix.Iovec, 0, n)
		remote := make([]unix.RemoteIovec, 0, n)
		want := 0
		for i := range n {
			if len(bufs[i]) == 0 {
				continue
			}
			local = append(local, unix.Iovec{Base: &bufs[i][0]})
			local[len(local)-1].SetLen(len(bufs[i]))
			remote = append(remote, unix.RemoteIovec{Base: uintptr(addrs[i]), Len: len(bufs[i])})
			want += len(bufs[i])
		}
		if want > 0 {
			got, err := vm(pid, local, remote, 0)
			if err != nil {
				return fmt.Errorf("%s %d pieces at %#x in %d: %w", verb, len(remote), addrs[0], pid, err)
			}
			if got != want {
				return fmt.Errorf("%s %d pieces at %#x in %d: short %s (%d of %d bytes)", verb, len(remote), addrs[0], pid, verb, got, want)
			}
		}
		addrs, bufs = addrs[n:], bufs[n:]
	}
	return nil
}

// PokeText writes buf at addr, in read-only text too, as ptrace may.
func PokeText(tid int, addr uint64, buf []byte) error {
	t, err := OpenText(tid)
	if err != nil {
		faultPoint()
		return pokeWords(tid, addr, buf)
	}
	defer t.Close()
	return t.Poke(tid, addr, buf)
}

// Text is a process's memory open for writing its text: a scan or a
// detach rewrites every probed function, and opening it for each write
// was most of what each rewrite cost.
type Text struct{ f *os.File }

// OpenText opens the memory of the process of task tid for writing its
// text.
func OpenText(tid int) (*Text, error) {
	f, err := os.OpenFile("/proc/"+strconv.Itoa(tid)+"/mem", os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return &Text{f}, nil
}

// Close releases the memory.
func (t *Text) Close() error { return t.f.Close() }

// Poke writes buf at addr with one write, which /proc/PID/mem does in
// read-only text as ptrace does: a word's PTRACE_PEEKTEXT and
// PTRACE_POKETEXT wait for the stopped thread each. A kernel that refuses
// such writes (proc_mem.force_override=never) gets the words, through
// task tid.
func (t *Text) Poke(tid int, addr uint64, buf []byte) error {
	faultPoint()
	if len(buf) == 0 {
		return nil
	}
	if n, err := t.f.WriteAt(buf, int64(addr)); err == nil && n == len(buf) {
		return nil
	}
	return pokeWords(tid, addr, buf)
}

// PokeWhole writes buf at addr with one write, or fails having written
// nothing: within a page the kernel copies the bytes at once, so a tracer
// killed in the write leaves all the old bytes or all the new ones. It
// refuses a buf crossing a page, and has no word-by-word fallback.
func (t *Text) PokeWhole(addr uint64, buf []byte) error {
	faultPoint()
	if len(buf) == 0 {
		return nil
	}
	if addr>>12 != (addr+uint64(len(buf))-1)>>12 {
		return fmt.Errorf("write at %#x: %d bytes cross a page", addr, len(buf))
	}
	return t.writeAll(addr, buf)
}

// writeAll writes buf at addr with one write, an error if short.
func (t *Text) writeAll(addr uint64, buf []byte) error {
	n, err := t.f.WriteAt(buf, int64(addr))
	if err == nil && n != len(buf) {
		err = io.ErrShortWrite
	}
	return err
}

// PokePages writes whole pages at addr, which must begin a page, with one
// write: the kernel copies the bytes a page at a time, each page at once,
// so a tracer killed in the write leaves each page all old or all new.
func (t *Text) PokePages(addr uint64, buf []byte) error {
	faultPoint()
	if addr%PageSize != 0 || len(buf)%PageSize != 0 {
		return fmt.Errorf("write at %#x: %d bytes are not whole pages", addr, len(buf))
	}
	return t.writeAll(addr, buf)
}

// PageSize is the size of the pages PokePages writes.
const PageSize = 4096

// pokeWords writes buf at addr word by word with ptrace.
func pokeWords(tid int, addr uint64, buf []byte) error {
	start := addr &^ 7
	end := (addr + uint64(len(buf)) + 7) &^ 7
	for w := start; w < end; w += 8 {
		var word [8]byte
		if _, err := unix.PtracePeekText(tid, uintptr(w), word[:]); err != nil {
			return fmt.Errorf("peek %#x: %w", w, err)
		}
		for i := 0; i < 8; i++ {
			a := w + uint64(i)
			if a >= addr && a < addr+uint64(len(buf)) {
				word[i] = buf[a-addr]
			}
		}
		if _, err := unix.PtracePokeText(tid, uintptr(w), word[:]); err != nil {
			return fmt.Errorf("poke %#x: %w", w, err)
		}
	}
	return nil
}

// Mem is the memory of stopped thread (or process) Mem, as the packages
// that read and write a tracee through an interface or a function value
// want it: Mem(tid).Read, Mem(tid).Write.
type Mem int

func (m Mem) Read(addr uint64, b []byte) error  { return ReadMem(int(m), addr, b) }
func (m Mem) Write(addr uint64, b []byte) error { return WriteMem(int(m), addr, b) }
