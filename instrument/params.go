package instrument

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
)

// ParamRegs reads from an ELF file's debug information how many of the six
// integer argument registers (rdi, rsi, rdx, rcx, r8, r9) each function's
// parameters fill, by the name in its symbol table (the linkage name of a
// C++ function). The System V classification, simplified: a floating
// point parameter goes in an xmm register and takes none; an aggregate of
// up to 16 bytes takes one or two; a larger one goes on the stack. A file
// without debug information yields an empty map and no error.
func ParamRegs(path string) (map[string]int, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) || f.Section(".debug_info") == nil {
			return map[string]int{}, nil // no debug information
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return paramRegs(d)
}

func paramRegs(d *dwarf.Data) (map[string]int, error) {
	out := map[string]int{}
	names := map[dwarf.Offset]string{} // declarations, for out-of-line definitions
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		if e == nil {
			return out, nil
		}
		if e.Tag != dwarf.TagSubprogram {
			continue
		}
		name := subprogramName(e)
		if name != "" {
			names[e.Offset] = name
		}
		if name == "" {
			for _, a := range []dwarf.Attr{dwarf.AttrSpecification, dwarf.AttrAbstractOrigin} {
				if off, ok := e.Val(a).(dwarf.Offset); ok {
					if name = names[off]; name == "" {
						name = nameAt(d, off)
					}
					break
				}
			}
		}
		if !e.Children {
			if name != "" && e.Val(dwarf.AttrLowpc) != nil {
				out[name] = 0
			}
			continue
		}
		regs, err := countParams(d, r)
		if err != nil {
			return out, err
		}
		if name != "" && e.Val(dwarf.AttrLowpc) != nil {
			out[name] = min(regs, 6)
		}
	}
}

// subprogramName is a subprogram's symbol name: its linkage name, else
// its name.
func subprogramName(e *dwarf.Entry) string {
	for _, a := range []dwarf.Attr{dwarf.AttrLinkageName, dwarf.AttrName} {
		if s, ok := e.Val(a).(string); ok {
			return s
		}
	}
	return ""
}

func nameAt(d *dwarf.Data, off dwarf.Offset) string {
	r := d.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil || e == nil {
		return ""
	}
	return subprogramName(e)
}

// countParams reads a subprogram's children (r is past the subprogram)
// and returns the integer registers its formal parameters take.
func countParams(d *dwarf.Data, r *dwarf.Reader) (int, error) {
	regs := 0
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return regs, err
		}
		if e.Tag == 0 {
			return regs, nil // end of the children
		}
		if e.Tag == dwarf.TagFormalParameter {
			regs += paramRegCount(d, e)
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

// paramRegCount is how many integer registers one parameter takes.
func paramRegCount(d *dwarf.Data, e *dwarf.Entry) int {
	off, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return 1
	}
	t, err := d.Type(off)
	if err != nil {
		return 1
	}
	for {
		switch tt := t.(type) {
		case *dwarf.TypedefType:
			t = tt.Type
			continue
		case *dwarf.QualType:
			t = tt.Type
			continue
		case *dwarf.FloatType, *dwarf.ComplexType:
			return 0
		case *dwarf.StructType:
			switch {
			case tt.ByteSize > 16:
				return 0
			case tt.ByteSize > 8:
				return 2
			}
			return 1
		}
		return 1
	}
}
