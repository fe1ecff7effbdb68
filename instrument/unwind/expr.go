package unwind

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// DWARF expression operations (DWARF 5 §2.5) that CFI uses.
const (
	opAddr       = 0x03
	opDeref      = 0x06
	opConst1u    = 0x08
	opConst1s    = 0x09
	opConst2u    = 0x0a
	opConst2s    = 0x0b
	opConst4u    = 0x0c
	opConst4s    = 0x0d
	opConst8u    = 0x0e
	opConst8s    = 0x0f
	opConstu     = 0x10
	opConsts     = 0x11
	opDup        = 0x12
	opDrop       = 0x13
	opOver       = 0x14
	opPick       = 0x15
	opSwap       = 0x16
	opRot        = 0x17
	opAbs        = 0x19
	opAnd        = 0x1a
	opDiv        = 0x1b
	opMinus      = 0x1c
	opMod        = 0x1d
	opMul        = 0x1e
	opNeg        = 0x1f
	opNot        = 0x20
	opOr         = 0x21
	opPlus       = 0x22
	opPlusUconst = 0x23
	opShl        = 0x24
	opShr        = 0x25
	opShra       = 0x26
	opXor        = 0x27
	opBra        = 0x28
	opEq         = 0x29
	opGe         = 0x2a
	opGt         = 0x2b
	opLe         = 0x2c
	opLt         = 0x2d
	opNe         = 0x2e
	opSkip       = 0x2f
	opLit0       = 0x30
	opLit31      = 0x4f
	opBreg0      = 0x70
	opBreg31     = 0x8f
	opBregx      = 0x92
	opDerefSize  = 0x94
	opNop        = 0x96
)

// Limits that keep a malformed or hostile expression cheap.
const (
	maxExprSteps = 1000
	maxExprStack = 64
)

var errExprStack = errors.New("expression stack underflow or overflow")

// evalExpr evaluates a DWARF expression with the registers of regs and the
// memory mem, starting from a stack holding push, and returns the value on
// top of the stack at the end. Operations that name an unknown register,
// and operations CFI does not use (register locations, pieces, calls, TLS),
// are errors.
func evalExpr(expr []byte, regs *regFile, mem Memory, push ...uint64) (uint64, error) {
	x := exprMachine{r: reader{b: expr}, regs: regs, mem: mem}
	x.stack = append(x.stack, push...)
	for steps := 0; !x.r.done(); steps++ {
		if steps == maxExprSteps {
			return 0, fmt.Errorf("expression runs longer than %d steps", maxExprSteps)
		}
		op := x.r.u8()
		if err := x.step(op); err != nil {
			return 0, fmt.Errorf("DW_OP %#x at offset %d: %w", op, x.r.off-1, err)
		}
		if x.r.err != nil {
			return 0, fmt.Errorf("DW_OP %#x operand: %w", op, x.r.err)
		}
		if len(x.stack) > maxExprStack {
			return 0, errExprStack
		}
	}
	if len(x.stack) == 0 {
		return 0, fmt.Errorf("expression leaves an empty stack: %w", errExprStack)
	}
	return x.stack[len(x.stack)-1], nil
}

type exprMachine struct {
	r     reader
	regs  *regFile
	mem   Memory
	stack []uint64
}

func (x *exprMachine) push(v uint64) { x.stack = append(x.stack, v) }

// pop removes and returns the top n values, deepest first.
func (x *exprMachine) pop(n int) ([]uint64, error) {
	if len(x.stack) < n {
		return nil, errExprStack
	}
	v := append([]uint64(nil), x.stack[len(x.stack)-n:]...)
	x.stack = x.stack[:len(x.stack)-n]
	return v, nil
}

func (x *exprMachine) step(op byte) error {
	switch {
	case op >= opLit0 && op <= opLit31:
		x.push(uint64(op - opLit0))
		return nil
	case op >= opBreg0 && op <= opBreg31:
		return x.breg(uint64(op-opBreg0), x.r.sleb())
	}
	switch op {
	case opNop:
	case opAddr:
		x.push(x.r.u64())
	case opConst1u:
		x.push(uint64(x.r.u8()))
	case opConst1s:
		x.push(uint64(int64(int8(x.r.u8()))))
	case opConst2u:
		x.push(uint64(x.r.u16()))
	case opConst2s:
		x.push(uint64(int64(int16(x.r.u16()))))
	case opConst4u:
		x.push(uint64(x.r.u32()))
	case opConst4s:
		x.push(uint64(int64(int32(x.r.u32()))))
	case opConst8u, opConst8s:
		x.push(x.r.u64())
	case opConstu:
		x.push(x.r.uleb())
	case opConsts:
		x.push(uint64(x.r.sleb()))
	case opBregx:
		reg := x.r.uleb()
		return x.breg(reg, x.r.sleb())
	case opDeref:
		return x.deref(8)
	case opDerefSize:
		return x.deref(int(x.r.u8()))
	case opBra, opSkip:
		return x.branch(op)
	default:
		return x.stackOp(op)
	}
	return nil
}

func (x *exprMachine) breg(reg uint64, off int64) error {
	v, ok := x.regs.get(reg)
	if !ok {
		return fmt.Errorf("register %d: %w", reg, errUnknownValue)
	}
	x.push(v + uint64(off))
	return nil
}

func (x *exprMachine) deref(size int) error {
	if size < 1 || size > 8 {
		return fmt.Errorf("dereference size %d", size)
	}
	a, err := x.pop(1)
	if err != nil {
		return err
	}
	var b [8]byte
	if err := x.mem(a[0], b[:size]); err != nil {
		return fmt.Errorf("dereference %#x: %w", a[0], err)
	}
	x.push(binary.LittleEndian.Uint64(b[:]))
	return nil
}

// branch executes DW_OP_skip and DW_OP_bra, whose 2-byte signed operand is
// relative to the end of the operation.
func (x *exprMachine) branch(op byte) error {
	delta := int(int16(x.r.u16()))
	if op == opBra {
		v, err := x.pop(1)
		if err != nil {
			return err
		}
		if v[0] == 0 {
			return nil
		}
	}
	to := x.r.off + delta
	if to < 0 || to > len(x.r.b) {
		return fmt.Errorf("branch to offset %d outside the expression", to)
	}
	x.r.off = to
	return nil
}

// stackOp executes the operations that only rearrange or combine stack
// values.
func (x *exprMachine) stackOp(op byte) error {
	switch op {
	case opDup, opDrop, opOver, opPick, opSwap, opRot:
		return x.shuffle(op)
	case opAbs, opNeg, opNot, opPlusUconst:
		v, err := x.pop(1)
		if err != nil {
			return err
		}
		x.push(unary(op, v[0], &x.r))
		return nil
	}
	if _, ok, _ := arith(op, 0, 1); !ok {
		return errors.New("unsupported operation")
	}
	v, err := x.pop(2)
	if err != nil {
		return err
	}
	r, _, err := arith(op, v[0], v[1])
	if err != nil {
		return err
	}
	x.push(r)
	return nil
}

func (x *exprMachine) shuffle(op byte) error {
	n := len(x.stack)
	switch op {
	case opDup, opOver, opPick:
		i := 0
		switch op {
		case opOver:
			i = 1
		case opPick:
			i = int(x.r.u8())
		}
		if i >= n {
			return errExprStack
		}
		x.push(x.stack[n-1-i])
	case opDrop:
		_, err := x.pop(1)
		return err
	case opSwap:
		if n < 2 {
			return errExprStack
		}
		x.stack[n-1], x.stack[n-2] = x.stack[n-2], x.stack[n-1]
	case opRot: // (a b c -- c a b): the top moves to third place
		if n < 3 {
			return errExprStack
		}
		x.stack[n-1], x.stack[n-2], x.stack[n-3] = x.stack[n-2], x.stack[n-3], x.stack[n-1]
	}
	return nil
}

func unary(op byte, v uint64, r *reader) uint64 {
	switch op {
	case opAbs:
		if int64(v) < 0 {
			return -v
		}
		return v
	case opNeg:
		return -v
	case opNot:
		return ^v
	default: // opPlusUconst
		return v + r.uleb()
	}
}

// arith combines the second value on the stack (a) with the top (b); ok is
// false for an operation it does not know. Comparisons are signed, as DWARF
// specifies for the generic type.
func arith(op byte, a, b uint64) (v uint64, ok bool, err error) {
	switch op {
	case opAnd:
		return a & b, true, nil
	case opOr:
		return a | b, true, nil
	case opXor:
		return a ^ b, true, nil
	case opPlus:
		return a + b, true, nil
	case opMinus:
		return a - b, true, nil
	case opMul:
		return a * b, true, nil
	case opShl:
		return a << b, true, nil
	case opShr:
		return a >> b, true, nil
	case opShra:
		return uint64(int64(a) >> b), true, nil
	case opDiv, opMod:
		if b == 0 {
			return 0, true, errors.New("division by zero")
		}
		if op == opDiv {
			return uint64(int64(a) / int64(b)), true, nil
		}
		return a % b, true, nil
	case opEq:
		return flag(a == b), true, nil
	case opNe:
		return flag(a != b), true, nil
	case opGe:
		return flag(int64(a) >= int64(b)), true, nil
	case opGt:
		return flag(int64(a) > int64(b)), true, nil
	case opLe:
		return flag(int64(a) <= int64(b)), true, nil
	case opLt:
		return flag(int64(a) < int64(b)), true, nil
	}
	return 0, false, nil
}

func flag(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
