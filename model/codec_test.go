package model_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

func roundTrip(t *testing.T, p *model.Profile) *model.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := model.Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	q, err := model.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestRoundTripDeepEqual(t *testing.T) {
	p := modeltest.Sample()
	p.Meta.StartUnixNs = 1_700_000_000_000_000_000
	p.Meta.Partial, p.Meta.PartialReason = true, "target crashed"
	p.Meta.Filters, p.Meta.Excludes, p.Meta.Libs = []string{"^app:"}, []string{"noise"}, []string{"libplugin"}
	p.Meta.Crash = &model.Crash{Pid: 100, Tid: 101, Signal: "SIGSEGV", Addr: 0x10, Stack: []string{"app:crash_here+0x4", "app:main+0x20"}}
	p.Meta.BuildID, p.Meta.StopOverheadNs, p.Meta.Stops = "abcdef", 13_000, 42
	p.Processes[1].Signal, p.Processes[1].Exited = "SIGKILL", false
	p.Meta.Detail = &model.DetailRule{Funcs: "^handle", SlowNs: 10e6, If: "ret<0", Limit: 100}
	p.Threads[0].DroppedTrees = 3
	p.Functions[2].TracedSinceNs = 1_200_000_000 // --auto-expand: traced from 1.2 s on
	p.Threads[0].Trees = []model.DetailTree{{Calls: []model.DetailCall{
		{Func: 1, Depth: 0, StartNs: 10, EndNs: 900, Flags: model.DetailReturned | model.DetailInFlight},
		{Func: 2, Depth: 1, StartNs: 20, EndNs: 800, Args: [6]uint64{1, 2, 3, 4, 5, 1 << 63}, Ret: 0xffffffff,
			Flags: model.DetailKept | model.DetailArgs | model.DetailReturned},
		{Func: 1, Depth: 2, StartNs: 30, EndNs: 900, Flags: model.DetailOpen},
	}}, {Calls: []model.DetailCall{{Func: 2, StartNs: 5, EndNs: 5}}}}
	for name, prof := range map[string]*model.Profile{
		"sample":    p,
		"empty":     model.New(),
		"synthetic": modeltest.Synthetic(5000, 4, 7),
		"composite": composite(),
		"sampled":   modeltest.Sampled(),
	} {
		t.Run(name, func(t *testing.T) {
			if err := prof.Validate(); err != nil {
				t.Fatalf("input invalid: %v", err)
			}
			if q := roundTrip(t, prof); !reflect.DeepEqual(prof, q) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", q, prof)
			}
		})
	}
}

// composite makes a thread with members and per-member contributions.
func composite() *model.Profile {
	p := modeltest.Sample()
	t := &p.Threads[1]
	t.Members = []model.Member{
		{Run: 0, Pid: 100, Tid: 101, Name: "a", ParentTid: 100, SpawnedBy: t.SpawnedBy, Level: 1, TracedNs: t.TracedNs},
		{Run: 1, Pid: 100, Tid: 109, Name: "b", ParentTid: 100, SpawnedBy: t.SpawnedBy, Level: 1},
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		n.Contribs = []model.Contrib{{Member: 0, Calls: n.Calls, RecursiveCalls: n.RecursiveCalls, SelfNs: n.SelfNs, TotalNs: n.TotalNs}}
	}
	t.Nodes[1].Elided = true
	t.Nodes[1].DroppedNs = 7
	t.TracedNs += 7
	t.Members[0].TracedNs += 7
	return p
}

// A file written before Meta.Sampling existed (testdata/sample-v1.data:
// modeltest.Sample written by that build) still reads, as exact values.
func TestReadsFileWithoutSampling(t *testing.T) {
	p, err := model.ReadFile("testdata/sample-v1.data")
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta.Sampled() || p.Meta.Values() != "exact (traced calls)" {
		t.Errorf("an old file reads as sampled: %+v", p.Meta.Sampling)
	}
	if want := modeltest.Sample(); !reflect.DeepEqual(p, want) {
		t.Errorf("old file differs:\n got %+v\nwant %+v", p, want)
	}
}

func encodeRaw(t *testing.T, payload []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(payload)
	zw.Close()
	return buf.Bytes()
}

func TestReadErrors(t *testing.T) {
	var good bytes.Buffer
	if err := model.Write(&good, modeltest.Sample()); err != nil {
		t.Fatal(err)
	}
	newer := append([]byte("PROFILE\x00"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(newer[8:], model.FormatVersion+1)
	rnd := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(rnd)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"truncated", good.Bytes()[:good.Len()/2], "truncated"},
		{"random", rnd, "not a profile file"},
		{"text", []byte("hello, world\n"), "not a profile file"},
		{"bad magic", encodeRaw(t, []byte("NOTAPROFILEATALL")), "bad magic"},
		{"newer version", encodeRaw(t, newer), "format version 2 is not supported"},
		{"garbage payload", encodeRaw(t, append(append([]byte{}, newer[:8]...), 1, 0, 0, 0, 0xff, 0xff, 0xff)), "corrupt profile data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := model.Read(bytes.NewReader(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
	t.Run("version error type", func(t *testing.T) {
		_, err := model.Read(bytes.NewReader(encodeRaw(t, newer)))
		var ve *model.VersionError
		if !errors.As(err, &ve) || ve.Version != model.FormatVersion+1 {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestReadFileNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.data")
	if err := os.WriteFile(path, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := model.ReadFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Fatalf("err = %v, want it to start with the path", err)
	}
	if err := model.WriteFile(path, modeltest.Sample()); err != nil {
		t.Fatal(err)
	}
	if _, err := model.ReadFile(path); err != nil {
		t.Fatal(err)
	}
}

func FuzzRead(f *testing.F) {
	var good bytes.Buffer
	model.Write(&good, modeltest.Sample())
	f.Add(good.Bytes())
	var small bytes.Buffer
	model.Write(&small, model.New())
	f.Add(small.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// The gzip layer hides most mutations; fuzz the payload too.
		p, err := model.Read(bytes.NewReader(data))
		if err == nil {
			if verr := p.Validate(); verr != nil {
				t.Fatalf("Read returned an invalid profile: %v", verr)
			}
		}
		if len(data) > 12 {
			model.Read(bytes.NewReader(encodeRaw(t, append([]byte("PROFILE\x00\x01\x00\x00\x00"), data...))))
		}
	})
}
