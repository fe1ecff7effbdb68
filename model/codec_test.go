package model_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

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
	p.Modules[1].SymbolsFrom = "build-id /usr/lib/debug/.build-id/ab/cdef.debug"
	p.Processes[1].Signal, p.Processes[1].Exited = "SIGKILL", false
	p.Meta.Comm, p.Processes[0].Comm, p.Processes[0].Argv = "myserver", "myserver", []string{"./myserver", "-v"}
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
		"sample":            p,
		"empty":             model.New(),
		"synthetic":         modeltest.Synthetic(5000, 4, 7),
		"composite":         composite(),
		"sampled":           modeltest.Sampled(),
		"counted":           modeltest.Counted(),
		"counted composite": countedComposite(),
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

// countedComposite is composite with counted calls split by member: hash
// called by compute (member 0: 4, member 1: 2), and by code of no
// function (member 0: 3).
func countedComposite() *model.Profile {
	p := composite()
	hash := len(p.Functions)
	p.Functions = append(p.Functions, model.Function{Module: 1, Name: "hash", Probe: model.ProbeCounted})
	compute := -1
	for f := range p.Functions {
		if p.Functions[f].Name == "compute" {
			compute = f
		}
	}
	p.Threads[1].Arcs = []model.Arc{
		{Caller: model.None, Callee: hash, Calls: 3, Contribs: []model.ArcContrib{{Member: 0, Calls: 3}}},
		{Caller: compute, Callee: hash, Calls: 6, Contribs: []model.ArcContrib{{Member: 0, Calls: 4}, {Member: 1, Calls: 2}}},
	}
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
	if p.Meta.BusySampled() {
		t.Errorf("an old file reads as CPU sampled: %+v", p.Meta.CPUSamples)
	}
	if want := modeltest.Sample(); !reflect.DeepEqual(p, want) {
		t.Errorf("old file differs:\n got %+v\nwant %+v", p, want)
	}
}

// The names a process was started by (argv[0], comm) read back beside its
// exe, and a file written before comm was recorded (sample-v1.data) reads
// with none: the process is named by its exe alone.
func TestRoundTripStartedAs(t *testing.T) {
	p := modeltest.Sample()
	p.Meta.Command, p.Meta.Comm = []string{"redis-server", "--port", "0"}, "redis-server"
	p.Processes[0].Exe, p.Processes[0].Argv, p.Processes[0].Comm = "/usr/bin/redis-check-rdb",
		[]string{"/usr/bin/redis-server *:6379"}, "redis-server"
	p.Processes[1].Comm = "app"
	q := roundTrip(t, p)
	if q.Meta.Comm != "redis-server" || q.Processes[0].Comm != "redis-server" || q.Processes[1].Comm != "app" ||
		!slices.Equal(q.Processes[0].Argv, p.Processes[0].Argv) {
		t.Fatalf("read back meta comm %q, processes %+v", q.Meta.Comm, q.Processes)
	}
	if got, want := q.Meta.StartedAs(), "redis-server (/bin/app)"; got != want {
		t.Errorf("Meta.StartedAs = %q, want %q", got, want)
	}
	if got, want := q.Processes[0].StartedAs(), "redis-server (/usr/bin/redis-check-rdb)"; got != want {
		t.Errorf("Process.StartedAs = %q, want %q", got, want)
	}
	old, err := model.ReadFile("testdata/sample-v1.data")
	if err != nil {
		t.Fatal(err)
	}
	if old.Meta.Comm != "" || old.Processes[0].Comm != "" || old.Meta.StartedAs() != "/bin/app" {
		t.Errorf("old file: comm %q, %q, named %q", old.Meta.Comm, old.Processes[0].Comm, old.Meta.StartedAs())
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
	badCRC := bytes.Clone(good.Bytes())
	badCRC[len(badCRC)-8] ^= 0xff // the gzip trailer's checksum
	type readCase struct {
		name string
		data []byte
		is   error // nil: check the text only
		want string
	}
	cases := []readCase{
		{"empty", nil, model.ErrNotProfile, "not a profile file (empty file)"},
		{"short text", []byte("hello\n"), model.ErrNotProfile, "not a profile file (no gzip header)"},
		{"text", []byte("hello, world\n"), model.ErrNotProfile, "not a profile file"},
		{"json", []byte(`{"threads": [{"tid": 22007, "traced_ns": 404098323}]}` + "\n"), model.ErrNotProfile, "not a profile file"},
		{"random", rnd, model.ErrNotProfile, "not a profile file"},
		{"gzip of text", encodeRaw(t, []byte("hello\n")), model.ErrNotProfile, "not a profile file (bad magic)"},
		{"bad magic", encodeRaw(t, []byte("NOTAPROFILEATALL")), model.ErrNotProfile, "bad magic"},
		{"bad checksum", badCRC, model.ErrNotProfile, "corrupt compressed data"},
		{"newer version", encodeRaw(t, newer), nil, "format version 2 is not supported"},
		{"garbage payload", encodeRaw(t, append(append([]byte{}, newer[:8]...), 1, 0, 0, 0, 0xff, 0xff, 0xff)), nil, "corrupt profile data"},
	}
	// A profile cut anywhere: in the gzip magic, the header, the data,
	// the trailer.
	for _, n := range []int{1, 2, 9, 10, 11, 40, good.Len() / 2, good.Len() - 8, good.Len() - 1} {
		cases = append(cases, readCase{fmt.Sprintf("cut at %d", n), good.Bytes()[:n], model.ErrTruncated, "file is truncated"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := model.Read(bytes.NewReader(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want it to be %v", err, c.is)
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
	t.Run("reader error", func(t *testing.T) {
		failed := errors.New("disk on fire")
		for _, r := range []io.Reader{iotest.ErrReader(failed), io.MultiReader(bytes.NewReader(good.Bytes()[:100]), iotest.ErrReader(failed))} {
			if _, err := model.Read(r); !errors.Is(err, failed) || errors.Is(err, model.ErrNotProfile) || errors.Is(err, model.ErrTruncated) {
				t.Fatalf("err = %v, want the reader's own", err)
			}
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
	if defect, err := os.ReadFile(defectFile); err == nil {
		f.Add(defect) // read through Repair
		if zr, err := gzip.NewReader(bytes.NewReader(defect)); err == nil {
			if payload, err := io.ReadAll(zr); err == nil {
				f.Add(payload[12:]) // its protobuf, for the second Read below
			}
		}
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Whatever Read returns, repaired or not, is valid.
		check := func(p *model.Profile, err error) {
			if err == nil {
				if verr := p.Validate(); verr != nil {
					t.Fatalf("Read returned an invalid profile: %v", verr)
				}
			}
		}
		check(model.Read(bytes.NewReader(data)))
		// The gzip layer hides most mutations; fuzz the payload too.
		if len(data) > 12 {
			check(model.Read(bytes.NewReader(encodeRaw(t, append([]byte("PROFILE\x00\x01\x00\x00\x00"), data...)))))
		}
	})
}

// defectFile is a recording as a build before Write repaired could write
// it, when the engine read two clocks within a thread: thread 1's self
// times add up to 101337 ns more than its traced time. requestServer
// with that defect (withDefect), written by model.WriteUnchecked; to make
// it again: PROFILE_WRITE_TESTDATA=1 go test -run TestWriteDefectFile ./model/
const defectFile = "testdata/selfsum-defect-v1.data"

// The defect of defectFile, as Repair reports it.
const defectRepair = "thread 1 (tid 22007): self times added up to 55844390 ns against a traced time of 55743053 ns " +
	"(off by 101337 ns, a measurement error): traced time set to their sum"

func TestWriteDefectFile(t *testing.T) {
	if os.Getenv("PROFILE_WRITE_TESTDATA") == "" {
		t.Skip("PROFILE_WRITE_TESTDATA not set")
	}
	var buf bytes.Buffer
	if err := model.WriteUnchecked(&buf, withDefect()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(defectFile, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// requestServer is a real-looking recording: a request server whose main
// thread starts two workers, each serving requests (parse, a recursive
// lookup, a write) and waiting on a condition variable in between.
func requestServer() *model.Profile {
	const exe = "/srv/bin/reqserver"
	b := modeltest.NewBuilder(exe)
	b.P.Meta.Mode, b.P.Meta.ToolVersion = "record", "0.9.2"
	b.P.Meta.Command = []string{exe, "--port", "8080", "--workers", "2"}
	b.P.Meta.StartUnixNs = 1_717_171_717_123_456_789
	b.P.Meta.Calibration = &model.Calibration{Host: "AMD EPYC", Inline: model.ProbeCost{InNs: 41, OutNs: 33},
		Trap: model.ProbeCost{InNs: 1900, OutNs: 1700}, Compensated: true, SubtractedNs: 23_408, HeldNs: 61_000,
		Stops: 40, StopNs: 1_800_000}
	pr := b.Process(22001, model.None, "", 0)
	b.Thread(pr, 22001, 0, "", 0, nil, []modeltest.Step{
		modeltest.Enter(120_000, "main"),
		modeltest.Enter(3_000, "parse_config"), modeltest.PLT(2_000, "libc.so.6:read"), modeltest.Exit(18_000), modeltest.Exit(4_000),
		modeltest.Enter(2_000, "start_workers"),
		modeltest.PLT(1_000, "libc.so.6:pthread_create"), modeltest.Exit(61_000),
		modeltest.PLT(1_000, "libc.so.6:pthread_create"), modeltest.Exit(58_000), modeltest.Exit(2_000),
		modeltest.Enter(1_000, "serve"), modeltest.PLT(1_000, "libc.so.6:epoll_wait"), modeltest.Exit(93_800_000), modeltest.Exit(3_000),
		modeltest.PLT(2_000, "libc.so.6:pthread_join"), modeltest.Exit(650_000),
		modeltest.Exit(9_000),
	})
	for w, tid := range []int{22007, 22008} {
		var script []modeltest.Step
		script = append(script, modeltest.Enter(15_000, "worker_loop"))
		for i := range 40 {
			jitter := int64((i*7919 + w*104_729) % 5_000)
			script = append(script,
				modeltest.PLT(800, "libc.so.6:pthread_cond_wait"), modeltest.Exit(1_200_000+jitter*60),
				modeltest.Enter(900, "handle_request"),
				modeltest.Enter(400, "parse_request"), modeltest.Exit(11_000+jitter), modeltest.Enter(300, "lookup"))
			for range 1 + i%3 {
				script = append(script, modeltest.Enter(200, "lookup"))
			}
			for range 2 + i%3 {
				script = append(script, modeltest.Exit(3_000+jitter/4))
			}
			script = append(script, modeltest.PLT(500, "libc.so.6:write"), modeltest.Exit(22_000+jitter*2), modeltest.Exit(1_500))
		}
		script = append(script, modeltest.Exit(4_000))
		b.Thread(pr, tid, 22001, "start_workers", 1, nil, script)
	}
	b.P.Meta.DurationNs = b.P.Threads[0].TracedNs
	for i, name := range []string{"reqserver", "worker-1", "worker-2"} {
		b.P.Threads[i].Name = name
		for _, n := range b.P.Threads[i].Nodes {
			b.P.Meta.TracedCalls += n.Calls
		}
	}
	return b.P
}

// withDefect is requestServer as the engine's two clocks left it: one
// write of worker 22007 measured 101337 ns too long, in its self time and
// its callers' totals, not in the thread's traced time.
func withDefect() *model.Profile {
	p := requestServer()
	th := &p.Threads[1]
	for i, n := range th.Nodes {
		if p.FuncName(n.Func) == "libc.so.6:write" {
			th.Nodes[i].SelfNs += 101_337
			for a := i; a > 0; a = th.Nodes[a].Parent {
				th.Nodes[a].TotalNs += 101_337
			}
			break
		}
	}
	return p
}

// A file written before Write repaired, with a thread whose self times
// add up to more than its traced time, reads: repaired, with a warning.
func TestReadRepairsOldFile(t *testing.T) {
	p, err := model.ReadFile(defectFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"repaired on read: " + defectRepair}; !slices.Equal(p.Meta.Warnings, want) {
		t.Fatalf("warnings %q, want %q", p.Meta.Warnings, want)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := p.Threads[1].TracedNs; got != 55_844_390 {
		t.Errorf("traced time %d, want the self times' sum", got)
	}
}

// Write repairs a defect like the reader does, into a file Read accepts
// as it is, and leaves the profile it was given as it was.
func TestWriteRepairs(t *testing.T) {
	p := withDefect()
	before := fmt.Sprintf("%+v", p)
	var buf bytes.Buffer
	if err := model.Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", p) != before {
		t.Fatal("Write changed the profile it was given")
	}
	q, err := model.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"repaired at write: " + defectRepair}; !slices.Equal(q.Meta.Warnings, want) {
		t.Fatalf("warnings %q, want %q", q.Meta.Warnings, want)
	}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	if q.Threads[1].Nodes[0].SelfNs != p.Threads[1].Nodes[0].SelfNs || q.Threads[1].TracedNs != 55_844_390 {
		t.Errorf("self times or traced time not as repaired: %d, %d", q.Threads[1].Nodes[0].SelfNs, q.Threads[1].TracedNs)
	}
}

// Write refuses a profile that breaks a structural invariant, writing
// nothing: no file is better than one no reader takes.
func TestWriteRefusesStructuralErrors(t *testing.T) {
	p := modeltest.Sample()
	p.Threads[2].Nodes[1].Parent = 5
	var buf bytes.Buffer
	err := model.Write(&buf, p)
	var ie *model.InvariantError
	if !errors.As(err, &ie) || ie.Measurement || !strings.Contains(err.Error(), "parent 5 must precede its child") {
		t.Fatalf("Write() = %v, want the structural invariant named", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("Write wrote %d bytes", buf.Len())
	}
	path := filepath.Join(t.TempDir(), "p.data")
	if err := model.WriteFile(path, p); !errors.As(err, &ie) {
		t.Fatalf("WriteFile() = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WriteFile left a file: %v", err)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WriteFile left its temporary file: %v", err)
	}
}
