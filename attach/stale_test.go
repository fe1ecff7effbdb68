package attach

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/profile-dev/profile/attach/internal/stub"
)

// The inline probes' return stub goes back to the caller by a ret where
// the return is stale, by a jump elsewhere: it keeps, per thread, the
// shadow index below which frames were open when a waiting call
// returned (stub.TStale). The program reads it from inside its traced
// calls: main's write and waits' read are waiting calls; fresh opens
// after they returned, at the index waits had.
func TestStaleReturns(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stale")
	if out, err := exec.Command("gcc", "-O2", "-fno-optimize-sibling-calls", "-o", bin, "testdata/stale.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	opt := defaultOptions(t)
	opt.Probes = ProbesInline
	opt.hijackOnly = true // the program finds the stubs from its hijacked return address
	hex := func(v uint64) string { return fmt.Sprintf("%#x", v) }
	var out bytes.Buffer
	r, err := recordTo(context.Background(), []string{bin, hex(stub.RetStub), hex(stub.DataPtr),
		hex(stub.DTable), hex(stub.TDepth), hex(stub.TStale)}, opt, &out)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 {
		t.Fatalf("exit %d: %s", r.ExitCode, out.String())
	}
	// main 0; write 1 (stale below 2, then 1 once it returned); waits 1,
	// read 2 (stale below 3, then 2); report 2. Then waits' return
	// leaves main alone below the bound; fresh and its report, opened
	// later, are not stale.
	want := "after read: depth 3 stale 2\nfresh: depth 3 stale 1\nmain: depth 2 stale 1\n"
	if out.String() != want {
		t.Errorf("the program printed\n%swant\n%s", out.String(), want)
	}
}
