// Package stubasm checks, in tests, the code the engine injects against
// its assembly source: an embedded blob is its source built, and every
// offset and constant the source `.set`s (or labels) that Go mirrors has
// the same value on both sides.
package stubasm

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Objcopy is how a stub's object becomes its blob: its text, flat. OBJ and
// BIN stand for the object and the blob.
var Objcopy = []string{"objcopy", "-O", "binary", "-j", ".text", "OBJ", "BIN"}

// Blob fails t unless got, embedded as blob, is src assembled and made a
// blob by link (OBJ and BIN replaced). It skips without an assembler.
func Blob(t *testing.T, blob, src string, got []byte, link []string) {
	t.Helper()
	needAs(t)
	dir := t.TempDir()
	// Named as the instructions below name it: a linked program's
	// symbol table holds its object's name.
	o := strings.TrimSuffix(blob, ".bin") + ".o"
	obj, bin := dir+"/"+o, dir+"/"+blob
	r := strings.NewReplacer("OBJ", obj, "BIN", bin)
	ln := make([]string, len(link))
	for i, a := range link {
		ln[i] = r.Replace(a)
	}
	for _, c := range [][]string{{"as", "--64", "-o", obj, src}, ln} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	want, _ := os.ReadFile(bin)
	if !bytes.Equal(want, got) {
		t.Fatalf("%s is not %s built: beside it, run `as --64 -o %s %s && %s`", blob, src, o, src,
			strings.NewReplacer("OBJ", o, "BIN", blob).Replace(strings.Join(link, " ")))
	}
}

// Layout fails t unless every name of goSide (a `.set` or a label of src)
// has its value in the assembly, and every `.set` of src is in goSide or
// in asmOnly (the assembly's own: stack frame slots and the like), so
// that a new constant is given its Go side or said to need none.
func Layout(t *testing.T, src string, goSide map[string]uint64, asmOnly []string) {
	t.Helper()
	needAs(t)
	obj := t.TempDir() + "/o.o"
	if out, err := exec.Command("as", "--64", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("as %s: %v\n%s", src, err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	asm := map[string]uint64{}
	own := map[string]bool{}
	for _, n := range asmOnly {
		own[n] = true
	}
	for _, s := range syms {
		asm[s.Name] = s.Value
		_, mirrored := goSide[s.Name]
		if s.Section == elf.SHN_ABS && !mirrored && !own[s.Name] {
			t.Errorf("%s: .set %s = %#x has no Go side: mirror it, or list it as the assembly's own", src, s.Name, s.Value)
		}
	}
	for name, want := range goSide {
		got, ok := asm[name]
		switch {
		case !ok:
			t.Errorf("%s: no %s, which Go mirrors as %#x", src, name, want)
		case got != want:
			t.Errorf("%s: %s is %#x in the assembly, %#x in Go", src, name, got, want)
		}
	}
}

func needAs(t *testing.T) {
	if _, err := exec.LookPath("as"); err != nil {
		t.Skip("no assembler")
	}
}
