package detail

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Cond is a condition on a call's argument registers or return value
// (--detail-if 'ret<0', 'arg0>100'). Registers are read as C ints by
// default (the low 32 bits, signed): a function returning int leaves the
// upper half of rax undefined. A suffix says otherwise: /i64, /u64, /u32.
type Cond struct {
	Reg   int    // 0-5: arg0-arg5; RegRet: the return value
	Type  string // "i32", "u32", "i64" or "u64"
	Op    string // ==, !=, <, <=, >, >=
	Value int64  // compared in Type (u64 as its bits)
	Text  string // as written
	// typ and outcomes are TypeCode() + 1 and Outcomes(), which ParseCond
	// works out once: Holds runs at every selected call's end.
	typ, outcomes uint8
}

// RegRet is Cond.Reg for the return value.
const RegRet = -1

var condRE = regexp.MustCompile(`^\s*(ret|arg[0-5])(?:/(i32|u32|i64|u64))?\s*(==|!=|<=|>=|<|>)\s*(\S+)\s*$`)

// ParseCond reads a condition: REG[/TYPE] OP VALUE, REG one of ret,
// arg0-arg5, VALUE a decimal or 0x hex integer.
func ParseCond(s string) (Cond, error) {
	m := condRE.FindStringSubmatch(s)
	if m == nil {
		return Cond{}, fmt.Errorf("condition %q: want ret or arg0-arg5 (optionally /i32, /u32, /i64, /u64), an operator (== != < <= > >=) and an integer, e.g. 'ret<0'", s)
	}
	c := Cond{Reg: RegRet, Type: m[2], Op: m[3], Text: strings.TrimSpace(s)}
	if c.Type == "" {
		c.Type = "i32"
	}
	if m[1] != "ret" {
		c.Reg = int(m[1][3] - '0')
	}
	if c.Type == "u64" {
		u, err := strconv.ParseUint(m[4], 0, 64)
		if err != nil {
			return Cond{}, fmt.Errorf("condition %q: %q is not an unsigned integer", s, m[4])
		}
		c.Value = int64(u)
		return c.compiled(), nil
	}
	v, err := strconv.ParseInt(m[4], 0, 64)
	if err != nil {
		return Cond{}, fmt.Errorf("condition %q: %q is not an integer", s, m[4])
	}
	c.Value = v
	return c.compiled(), nil
}

func (c Cond) compiled() Cond {
	c.typ, c.outcomes = c.TypeCode()+1, c.Outcomes()
	return c
}

// OnReturn tells whether the condition needs the return value.
func (c Cond) OnReturn() bool { return c.Reg == RegRet }

// Type codes of TypeCode (the inline stubs' COND_I32 ...).
const (
	TypeI32 = 0
	TypeU32 = 1
	TypeI64 = 2
	TypeU64 = 3
)

// TypeCode numbers Type (the inline stubs' D_COND_TYPE).
func (c Cond) TypeCode() uint8 {
	switch c.Type {
	case "u32":
		return TypeU32
	case "i64":
		return TypeI64
	case "u64":
		return TypeU64
	}
	return TypeI32
}

// Outcomes is Op as the set of comparisons of the register with Value
// for which the condition holds: bit 0 below, bit 1 equal, bit 2 above.
func (c Cond) Outcomes() uint8 {
	const below, equal, above = 1, 2, 4
	switch c.Op {
	case "<":
		return below
	case "<=":
		return below | equal
	case "==":
		return equal
	case "!=":
		return below | above
	case ">=":
		return equal | above
	}
	return above
}

// Holds evaluates the condition on a call's registers; the return value
// counts only when returned (a call left by longjmp has none). i32, u32
// and i64 compare as signed 64-bit integers, u64 unsigned.
func (c *Cond) Holds(args *[6]uint64, ret uint64, returned bool) bool {
	var raw uint64
	if c.Reg == RegRet {
		if !returned {
			return false
		}
		raw = ret
	} else {
		raw = args[c.Reg]
	}
	typ, outcomes := c.typ-1, c.outcomes
	if c.typ == 0 { // not from ParseCond
		typ, outcomes = c.TypeCode(), c.Outcomes()
	}
	var outcome uint
	switch typ {
	case 3:
		outcome = order(raw, uint64(c.Value))
	case 0:
		outcome = order(int64(int32(raw)), c.Value)
	case 1:
		outcome = order(int64(uint32(raw)), c.Value)
	default:
		outcome = order(int64(raw), c.Value)
	}
	return outcomes>>outcome&1 != 0
}

// order is 0 when a < b, 1 when equal, 2 when above.
func order[T int64 | uint64](a, b T) uint {
	switch {
	case a < b:
		return 0
	case a == b:
		return 1
	}
	return 2
}
