package perfsample

import (
	"encoding/binary"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A record: a header (type, misc, size), then its fields. The kernel
// keeps records 8-byte aligned, so a header never wraps around the ring's
// end, though the fields after it may.
const (
	headerSize = 8
	sampleSize = headerSize + 8 + 8 // PERF_SAMPLE_IP, PERF_SAMPLE_TIME
	lostSize   = headerSize + 8 + 8 // id, lost
)

// recordSize is the largest sample record with stackBytes of stack: the
// registers' abi and values, the stack's size, bytes and dynamic size.
func recordSize(stackBytes int) int {
	if stackBytes == 0 {
		return sampleSize
	}
	return sampleSize + 8 + nRegs*8 + 8 + stackBytes + 8
}

// Read hands f every sample written since the last Read, oldest first,
// and frees their room; it returns how many. Samples the kernel had no
// room for are counted in Lost.
func (s *Sampler) Read(f func(Sample)) (n int) {
	// The head is loaded before the records it covers are read, and the
	// tail stored after: Go's atomics order them (the kernel's
	// smp_store_release of the head, smp_load_acquire of the tail).
	head := atomic.LoadUint64(&s.meta.Data_head)
	tail := atomic.LoadUint64(&s.meta.Data_tail)
	mask := uint64(len(s.data) - 1)
	for tail != head {
		off := tail & mask
		typ := binary.LittleEndian.Uint32(s.data[off:])
		misc := binary.LittleEndian.Uint16(s.data[off+4:])
		size := uint64(binary.LittleEndian.Uint16(s.data[off+6:]))
		if size < headerSize || size > head-tail {
			// Not a record the kernel wrote: drop what is left rather
			// than read garbage as samples.
			tail = head
			break
		}
		switch {
		case typ == unix.PERF_RECORD_SAMPLE && size >= sampleSize && size <= uint64(len(s.rec)):
			b := s.record(off, size)
			x := Sample{
				IP:     binary.LittleEndian.Uint64(b[8:]),
				TimeNs: int64(binary.LittleEndian.Uint64(b[16:])),
				User:   misc&unix.PERF_RECORD_MISC_CPUMODE_MASK == unix.PERF_RECORD_MISC_USER,
			}
			if s.stack > 0 {
				x.Regs, x.Stack, x.HasRegs = decodeStack(b[sampleSize:])
			}
			f(x)
			n++
		case typ == unix.PERF_RECORD_LOST && size >= lostSize:
			s.lost += int64(binary.LittleEndian.Uint64(s.record(off, lostSize)[16:]))
		}
		tail += size
	}
	atomic.StoreUint64(&s.meta.Data_tail, tail)
	return n
}

// record returns the size bytes at off in the ring, put together in a
// buffer of the sampler's when they wrap around its end.
func (s *Sampler) record(off, size uint64) []byte {
	if off+size <= uint64(len(s.data)) {
		return s.data[off : off+size]
	}
	k := copy(s.rec[:size], s.data[off:])
	copy(s.rec[k:size], s.data)
	return s.rec[:size]
}

// Lost is how many samples the kernel dropped so far for want of room in
// the ring (PERF_RECORD_LOST): the caller read too seldom. The kernel
// reports a loss once a Read made room, ahead of the next sample, so
// the Read after that counts it.
func (s *Sampler) Lost() int64 { return s.lost }
