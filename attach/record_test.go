package attach

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/profile-dev/profile/instrument"
	"github.com/profile-dev/profile/internal/workload"
	"github.com/profile-dev/profile/model"
)

func defaultOptions(t *testing.T) Options {
	t.Helper()
	f, err := instrument.NewFilter(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Filter: f}
}

// recordWorkload records a workload with its stdout captured.
func recordWorkload(t *testing.T, name string, opt Options, args ...string) (*Result, string) {
	t.Helper()
	bin, err := workload.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err := recordTo(context.Background(), append([]string{bin}, args...), opt, &out)
	if err != nil {
		t.Fatalf("record %s: %v", name, err)
	}
	if err := r.Profile.Validate(); err != nil {
		t.Fatalf("record %s: %v", name, err)
	}
	return r, out.String()
}

// recordTo is Record with the target's stdout sent to w.
func recordTo(ctx context.Context, argv []string, opt Options, w *bytes.Buffer) (*Result, error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { w.ReadFrom(rd); close(done) }()
	opt.stdout = wr
	r, err := Record(ctx, argv, opt)
	wr.Close()
	<-done
	return r, err
}

func untraced(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	bin, err := workload.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	out, _ := cmd.Output()
	return string(out), cmd.ProcessState.ExitCode()
}

func TestRecordExactCounts(t *testing.T) {
	for _, name := range []string{"recursion", "mutual", "threads", "forks", "blocking", "unusual", "dlopen", "demo", "altstack"} {
		t.Run(name, func(t *testing.T) {
			want, err := workload.LoadExpected(name)
			if err != nil {
				t.Fatal(err)
			}
			opt := defaultOptions(t)
			if name == "dlopen" {
				// The plugin is dlopen'ed later: found through r_debug.
				if opt.Filter, err = instrument.NewFilter(nil, nil, []string{"libplugin"}); err != nil {
					t.Fatal(err)
				}
			}
			r, out := recordWorkload(t, name, opt)
			got := observe(r.Profile)
			if !reflect.DeepEqual(got.Functions, want.Functions) {
				t.Errorf("functions:\n got %v\nwant %v", got.Functions, want.Functions)
			}
			if !reflect.DeepEqual(got.Threads, want.Threads) {
				t.Errorf("threads:\n got %+v\nwant %+v", got.Threads, want.Threads)
			}
			if !reflect.DeepEqual(got.Processes, want.Processes) {
				t.Errorf("processes:\n got %+v\nwant %+v", got.Processes, want.Processes)
			}
			wantOut, wantCode := untraced(t, name)
			if out != wantOut {
				t.Errorf("stdout differs from an untraced run:\n got %q\nwant %q", out, wantOut)
			}
			if r.ExitCode != wantCode || r.ExitCode != want.ExitCode || r.Signal != 0 {
				t.Errorf("exit = %d (signal %v), untraced %d, expected %d", r.ExitCode, r.Signal, wantCode, want.ExitCode)
			}
		})
	}
}

var _ = model.None
