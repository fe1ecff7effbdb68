package instrument

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The execution test runs every planCases instruction for real in
// testdata/oolrun.c: once in place, and once the way the tracer would
// (out of line from a slot, or emulated in Go with the plan), and requires
// the same registers, flags, xmm0 and memory afterwards. The code region is
// filled with int3 landing pads, so wherever control goes the run stops
// with a SIGTRAP right there.
const (
	execBase     = 0x1000000000 // code region: 64 KiB at 64 GiB
	execSize     = 0x10000
	execAddr     = execBase + 0x1000 // the instruction under test
	execData     = execBase + 0x8000 // qwords holding landing addresses
	execStack    = execBase + 0xe000 // initial rsp (the stack is data too)
	execRIPData  = execBase + 0x9000 // where rip-relative operands point
	execSlotSize = 0x1000
	execSlotOff  = 0x100
	flagsMask    = 0x8d5 | 0x400 // CF PF AF ZF SF OF, DF
)

// execSlots are slot region bases: one in rel32 reach, one far away.
var execSlots = []uint64{execBase + 0x10000000, execBase + 0x200000000}

type execState struct {
	regs  [16]uint64 // rax rcx rdx rbx rsp rbp rsi rdi r8..r15
	flags uint64
	xmm0  [16]byte
}

type execResult struct {
	sig, rip uint64
	execState
	image []byte
}

func execImage() []byte {
	img := bytes.Repeat([]byte{0xcc}, execSize)
	for off := execData - execBase; off < execSize; off += 8 {
		landing := execBase + 0x2000 + uint64(off*2)%0x6000
		binary.LittleEndian.PutUint64(img[off:], landing)
	}
	return img
}

// execStates are the initial states each instruction runs from: flags all
// clear with rcx 0, and all set with rcx 1, so every condition goes both
// ways. rax points at a landing pad (for jmp/call rax), the other pointers
// at data.
func execStates() []execState {
	base := execState{regs: [16]uint64{
		execBase + 0x3000, 0, execData + 0x200, execData + 0x100,
		execStack, execStack + 0x100, execData + 0x300, execData + 0x400,
		execData + 0x500, 4, execData + 0x600, execData + 0x700,
		execData + 0x800, execData + 0x900, execData + 0xa00, execData + 0xb00,
	}}
	for i := range base.xmm0 {
		base.xmm0[i] = 0x11 * byte(i)
	}
	a, b := base, base
	a.flags, a.regs[1] = 0x202, 0
	b.flags, b.regs[1] = 0x202|0x8d5, 1
	return []execState{a, b}
}

func (s execState) ptraceRegs() unix.PtraceRegs {
	r := s.regs
	return unix.PtraceRegs{Rax: r[0], Rcx: r[1], Rdx: r[2], Rbx: r[3], Rsp: r[4], Rbp: r[5], Rsi: r[6], Rdi: r[7],
		R8: r[8], R9: r[9], R10: r[10], R11: r[11], R12: r[12], R13: r[13], R14: r[14], R15: r[15], Eflags: s.flags}
}

// aimRIP points a rip-relative operand of code (placed at execAddr) at
// execRIPData, so it reads and writes meaningful memory.
func aimRIP(t *testing.T, code []byte) []byte {
	t.Helper()
	code = append([]byte(nil), code...)
	off := -1
	if v, err := decodeVEX(code); err == nil {
		off = v.ripOff
	} else if inst, err := decodeInst(code); err == nil {
		if _, ok := ripMem(inst); ok {
			off = inst.PCRelOff
		}
	}
	if off >= 0 {
		d, _ := rel32(execAddr+uint64(len(code)), execRIPData)
		binary.LittleEndian.PutUint32(code[off:], uint32(d))
	}
	return code
}

func cpuHas(t *testing.T, flag string) bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "flags") {
			return strings.Contains(line+" ", " "+flag+" ")
		}
	}
	return false
}

type execRun struct {
	name        string
	entry, slot uint64 // slot 0: no slot region
	ool         []byte
	state       execState
	image       []byte
	want        *execResult // emulated expectation; nil: compare with native
	native      bool
	nativeIndex int // the native run this one is compared with
	plan        Plan
	emulated    bool
}

func TestPlanExecutes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a C harness")
	}
	harness := buildC(t, "oolrun.c")
	hasAVX2, hasAVX512 := cpuHas(t, "avx2"), cpuHas(t, "avx512f")
	var runs []execRun
	for _, pc := range planCases {
		switch {
		case pc.name == "syscall": // rcx and r11 get the rip and flags after it: differ by design
			continue
		case strings.Contains(pc.name, "EVEX") && !hasAVX512, strings.HasPrefix(pc.name, "v") && !hasAVX2:
			t.Logf("%s: CPU lacks the extension, skipped", pc.name)
			continue
		}
		code := aimRIP(t, unhex(t, pc.code))
		image := execImage()
		copy(image[execAddr-execBase:], code)
		for _, st := range execStates() {
			native := len(runs)
			runs = append(runs, execRun{name: pc.name + " native", native: true, entry: execAddr, state: st, image: image})
			for _, slotBase := range execSlots {
				slot := slotBase + execSlotOff
				p, err := PlanAt(code, execAddr, slot)
				if errors.Is(err, ErrCannotPlan) && slotBase == execSlots[1] && pc.ripOff >= 0 {
					continue // rip-relative out of reach: refused, as tested elsewhere
				}
				if err != nil {
					t.Fatalf("%s: %v", pc.name, err)
				}
				r := execRun{name: fmt.Sprintf("%s from %#x", pc.name, slot), state: st, image: image, nativeIndex: native, plan: p}
				if p.Emulate == EmuNone {
					r.entry, r.slot, r.ool = slot, slotBase, p.OOL
				} else {
					r.emulated = true
					r.want = emulate(t, p, st, image)
				}
				runs = append(runs, r)
			}
		}
	}
	results := runHarness(t, harness, runs)
	checked := 0
	for i, r := range runs {
		if r.native {
			if results[i].sig != uint64(unix.SIGTRAP) {
				t.Errorf("%s: stopped by signal %d at %#x, not a landing pad", r.name, results[i].sig, results[i].rip)
			}
			continue
		}
		want := &results[r.nativeIndex]
		got := &results[i]
		if r.emulated {
			got = r.want
		}
		if diff := compareExec(want, got); diff != "" {
			t.Errorf("%s (%v, flags %#x): %s", r.name, r.plan.Emulate, r.state.flags, diff)
		}
		checked++
	}
	t.Logf("%d plans executed and compared with the original instruction", checked)
}

// emulate applies an emulated plan to a state the way the tracer would,
// and returns the result the harness would report: the run stops on the
// int3 at the new rip.
func emulate(t *testing.T, p Plan, st execState, image []byte) *execResult {
	t.Helper()
	res := &execResult{sig: uint64(unix.SIGTRAP), execState: st, image: append([]byte(nil), image...)}
	rip := p.Next()
	switch p.Emulate {
	case EmuJmp:
		rip = p.Target
	case EmuCall, EmuCallIndirect:
		rip = p.Target
		if p.Emulate == EmuCallIndirect {
			read := func(a uint64) (uint64, error) {
				if a < execBase || a+8 > execBase+execSize {
					return 0, fmt.Errorf("read %#x outside the image", a)
				}
				return binary.LittleEndian.Uint64(image[a-execBase:]), nil
			}
			var err error
			if rip, err = p.IndirectTarget(st.ptraceRegs(), read); err != nil {
				t.Fatal(err)
			}
		}
		res.regs[4] -= 8
		binary.LittleEndian.PutUint64(res.image[res.regs[4]-execBase:], p.Next())
	}
	res.rip = rip + 1 // after the int3 landing pad
	return res
}

func compareExec(want, got *execResult) string {
	var diffs []string
	if want.sig != got.sig || want.rip != got.rip {
		diffs = append(diffs, fmt.Sprintf("stopped by %d at %#x, want %d at %#x", got.sig, got.rip, want.sig, want.rip))
	}
	names := [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
	for i := range want.regs {
		if want.regs[i] != got.regs[i] {
			diffs = append(diffs, fmt.Sprintf("%s = %#x, want %#x", names[i], got.regs[i], want.regs[i]))
		}
	}
	if want.flags&flagsMask != got.flags&flagsMask {
		diffs = append(diffs, fmt.Sprintf("flags = %#x, want %#x", got.flags&flagsMask, want.flags&flagsMask))
	}
	if want.xmm0 != got.xmm0 {
		diffs = append(diffs, fmt.Sprintf("xmm0 = % x, want % x", got.xmm0, want.xmm0))
	}
	if !bytes.Equal(want.image, got.image) {
		for i := range want.image {
			if want.image[i] != got.image[i] {
				diffs = append(diffs, fmt.Sprintf("memory differs first at %#x", execBase+uint64(i)))
				break
			}
		}
	}
	return strings.Join(diffs, "; ")
}

// runHarness writes every run as a record to the harness and reads the
// results back.
func runHarness(t *testing.T, harness string, runs []execRun) []execResult {
	t.Helper()
	var in bytes.Buffer
	le := func(v uint64) { in.Write(binary.LittleEndian.AppendUint64(nil, v)) }
	for _, r := range runs {
		le(execBase)
		le(execSize)
		slotSize := uint64(0)
		if r.slot != 0 {
			slotSize = execSlotSize
		}
		le(r.slot)
		le(slotSize)
		le(r.entry)
		for _, v := range r.state.regs {
			le(v)
		}
		le(r.state.flags)
		in.Write(r.state.xmm0[:])
		in.Write(make([]byte, 16)) // xmm1
		in.Write(r.image)
		if slotSize > 0 {
			slot := bytes.Repeat([]byte{0xcc}, execSlotSize)
			copy(slot[execSlotOff:], r.ool)
			in.Write(slot)
		}
	}
	cmd := exec.Command(harness)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(harness), err, stderr.Bytes())
	}
	rd := bytes.NewReader(out)
	u64 := func() uint64 {
		var b [8]byte
		if _, err := io.ReadFull(rd, b[:]); err != nil {
			t.Fatalf("harness output: %v", err)
		}
		return binary.LittleEndian.Uint64(b[:])
	}
	results := make([]execResult, len(runs))
	for i := range runs {
		res := &results[i]
		res.sig, res.rip = u64(), u64()
		for j := range res.regs {
			res.regs[j] = u64()
		}
		res.flags = u64()
		res.image = make([]byte, execSize)
		if _, err := io.ReadFull(rd, res.xmm0[:]); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rd, res.image); err != nil {
			t.Fatal(err)
		}
	}
	return results
}
