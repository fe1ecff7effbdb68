package attach

import (
	"testing"

	"github.com/profile-dev/profile/attach/internal/stubasm"
)

// TestBlobsMatchSource: the machine code the engine embeds is its
// assembly source built: the inline probes' stubs (the SIGTRAP healer's:
// attach/internal/heal; the calibration program's: attach/internal/calib).
func TestBlobsMatchSource(t *testing.T) {
	for _, tc := range []struct {
		blob, src string
		got       []byte
		link      []string
	}{
		{"probe.bin", "inlinecode/probe.S", probeCode, stubasm.Objcopy},
	} {
		t.Run(tc.blob, func(t *testing.T) { stubasm.Blob(t, tc.blob, tc.src, tc.got, tc.link) })
	}
	if len(probeCode) != stubDataPtr+8 {
		t.Fatalf("probe.bin is %d bytes, want the data pointer last at %#x", len(probeCode), stubDataPtr)
	}
}
