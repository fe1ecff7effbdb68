package attach

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBlobsMatchSource: the machine code the engine embeds is its
// assembly source built: the inline probes' stubs, the SIGTRAP healer
// and the calibration program.
func TestBlobsMatchSource(t *testing.T) {
	if _, err := exec.LookPath("as"); err != nil {
		t.Skip("no assembler")
	}
	for _, tc := range []struct {
		blob, src string
		got       []byte
		link      []string // how the object becomes the blob: OBJ and BIN replaced
	}{
		{"probe.bin", "inlinecode/probe.S", probeCode, []string{"objcopy", "-O", "binary", "-j", ".text", "OBJ", "BIN"}},
		{"heal.bin", "healcode/heal.S", healCode, []string{"objcopy", "-O", "binary", "-j", ".text", "OBJ", "BIN"}},
		{"calib.bin", "calibcode/calib.S", calibProgram, []string{"ld", "-static", "-nostdlib", "--build-id=none", "-o", "BIN", "OBJ"}},
	} {
		t.Run(tc.blob, func(t *testing.T) {
			dir := t.TempDir()
			// Named as the instructions below name it: a linked program's
			// symbol table holds its object's name.
			o := strings.TrimSuffix(tc.blob, ".bin") + ".o"
			obj, bin := dir+"/"+o, dir+"/"+tc.blob
			link := strings.NewReplacer("OBJ", obj, "BIN", bin)
			ln := make([]string, len(tc.link))
			for i, a := range tc.link {
				ln[i] = link.Replace(a)
			}
			for _, c := range [][]string{{"as", "--64", "-o", obj, tc.src}, ln} {
				if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
					t.Fatalf("%v: %v\n%s", c, err, out)
				}
			}
			want, _ := os.ReadFile(bin)
			if !bytes.Equal(want, tc.got) {
				t.Fatalf("attach/%s is not %s built: in attach/, run `as --64 -o %s %s && %s`", tc.blob, tc.src, o, tc.src,
					strings.NewReplacer("OBJ", o, "BIN", tc.blob).Replace(strings.Join(tc.link, " ")))
			}
		})
	}
	if len(probeCode) != stubDataPtr+8 {
		t.Fatalf("probe.bin is %d bytes, want the data pointer last at %#x", len(probeCode), stubDataPtr)
	}
}
