package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/profile-dev/profile/export"
	"github.com/profile-dev/profile/model/modeltest"
)

func TestExportCmd(t *testing.T) {
	path := sampleFile(t)
	dir := filepath.Dir(path)
	for _, c := range []struct {
		args []string
		file string // written, "" for standard output
		want func() []byte
	}{
		{[]string{"--format", "pprof"}, "profile.pb.gz", nil},
		{[]string{"--format", "folded"}, "profile.folded", func() []byte {
			var b bytes.Buffer
			export.WriteFolded(&b, modeltest.Sample(), export.Options{Busy: true})
			return b.Bytes()
		}},
		{[]string{"--format", "folded", "--scope", "wall", "-o", "-"}, "", func() []byte {
			var b bytes.Buffer
			export.WriteFolded(&b, modeltest.Sample(), export.Options{})
			return b.Bytes()
		}},
		{[]string{"--format", "FOLDED", "--value", "calls", "--threads", "-o", "-"}, "", func() []byte {
			var b bytes.Buffer
			export.WriteFolded(&b, modeltest.Sample(), export.Options{Value: export.Calls, Threads: true, Busy: true})
			return b.Bytes()
		}},
		{[]string{"--format", "pprof", "-o", filepath.Join(dir, "x.prof")}, "x.prof", nil},
	} {
		out, stderr, err := runSub(newExportCmd(), append([]string{path}, c.args...)...)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		got := []byte(out)
		if c.file != "" {
			if stderr != "profile: wrote "+filepath.Join(dir, c.file)+"\n" {
				t.Errorf("%q: stderr %q", c.args, stderr)
			}
			if got, err = os.ReadFile(filepath.Join(dir, c.file)); err != nil {
				t.Fatal(err)
			}
		}
		if c.want == nil { // pprof: gzip
			if !bytes.HasPrefix(got, []byte{0x1f, 0x8b}) {
				t.Errorf("%q: not gzip", c.args)
			}
		} else if !bytes.Equal(got, c.want()) {
			t.Errorf("%q: output\n%s", c.args, got)
		}
	}
}
