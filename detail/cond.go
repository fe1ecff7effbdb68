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
		return c, nil
	}
	v, err := strconv.ParseInt(m[4], 0, 64)
	if err != nil {
		return Cond{}, fmt.Errorf("condition %q: %q is not an integer", s, m[4])
	}
	c.Value = v
	return c, nil
}

// OnReturn tells whether the condition needs the return value.
func (c Cond) OnReturn() bool { return c.Reg == RegRet }

// Holds evaluates the condition on a call's registers; the return value
// counts only when returned (a call left by longjmp has none).
func (c Cond) Holds(args *[6]uint64, ret uint64, returned bool) bool {
	var raw uint64
	if c.Reg == RegRet {
		if !returned {
			return false
		}
		raw = ret
	} else {
		raw = args[c.Reg]
	}
	if c.Type == "u64" {
		return compare(c.Op, raw, uint64(c.Value))
	}
	var v int64
	switch c.Type {
	case "i32":
		v = int64(int32(raw))
	case "u32":
		v = int64(uint32(raw))
	default:
		v = int64(raw)
	}
	return compare(c.Op, v, c.Value)
}

func compare[T int64 | uint64](op string, a, b T) bool {
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	default:
		return a >= b
	}
}
