// Package model holds the profile data model (docs/design.md, Data model):
// functions and modules, processes, threads and one calling-context tree
// (CCT) per thread. It owns the invariants (Validate), the derived
// function-level call graph (Graph) and the file format (Write, Read). It
// knows nothing of ptrace.
package model

import (
	"fmt"
	"strings"
)

// StartFunc is the index of the pseudo-function START in every profile's
// function table: the root of every thread's CCT.
const StartFunc = 0

// StartName is the display name of the pseudo-function START.
const StartName = "START"

// None marks an absent index (no function, no process, no parent node).
const None = -1

// Profile is one run (or a composite of runs after merge).
type Profile struct {
	Meta      Meta
	Modules   []Module   // Modules[0] is the empty module of START
	Functions []Function // Functions[StartFunc] is START
	Processes []Process
	Threads   []Thread
}

// Meta describes how and when the profile was made.
type Meta struct {
	ToolVersion string
	Mode        string // "record", "attach", "merge", "import" or "synthetic"
	Command     []string
	Exe         string
	// Comm is the first process's Process.Comm, as Exe is its Exe: with
	// Command[0] (its argv[0]) the name it was started by (StartedAs).
	Comm        string
	BuildID     string
	StartUnixNs int64
	DurationNs  int64
	// Partial: something was lost or the target died before its end
	// (crashed, killed, events dropped); PartialReason says what.
	Partial       bool
	PartialReason string // "target killed by SIGKILL", "snapshot: tracing went on", ...
	// Detached: tracing ended (attach --duration, Ctrl-C) while the
	// target went on running. The profile is complete for its window: not
	// partial for that.
	Detached       bool
	Filters        []string
	Excludes       []string
	Libs           []string
	StopOverheadNs int64 // measured cost of one ptrace stop
	Stops          int64
	TracedCalls    int64
	Breakpoints    int64
	Crash          *Crash
	Sources        []string // input files of a merge
	// Warnings say what the user should know of how the profile was made
	// (a Go program traced with --force, a stripped executable, ...).
	Warnings []string
	// Sampling is set for a profile imported from a sampling profiler:
	// its values are sampled, not traced (see Sampling); nil otherwise.
	Sampling *Sampling
	// Calibration is the probes' measured cost per call and what was
	// taken out of the times (see Compensate); nil when not measured.
	Calibration *Calibration
	// CPUSamples is set when the tracer sampled the traced threads' CPU
	// time (Node.SampledNs); nil when it did not.
	CPUSamples *CPUSamples
	// Detail is the rule of the threads' detail trees; nil when no
	// detail was asked for.
	Detail *DetailRule
}

// Crash records the fatal signal that ended a traced process.
type Crash struct {
	Pid    int
	Tid    int
	Signal string   // e.g. "SIGSEGV"
	Addr   uint64   // faulting address, when the signal has one
	Stack  []string // innermost first: "module:function+0xoff" or a hex pc
}

// Module is an ELF file.
type Module struct {
	Path    string
	BuildID string
	// DynamicOnly: the file has no symbol table; its functions were found
	// through its dynamic symbols (the exported ones) only.
	DynamicOnly bool
	// SymbolsFrom says where its function symbols came from when not
	// from the file itself (a stripped file's separate debug file):
	// "build-id PATH", "debuglink PATH" or "debuginfod URL"; "" for the
	// file.
	SymbolsFrom string
}

// Function is identified by (module, symbol), never by address
// (docs/design.md, Data model).
type Function struct {
	Module int    // index into Profile.Modules
	Name   string // demangled symbol
	// TracedSinceNs is when, in ns from the profile's start, the tracer
	// began tracing the function (record --auto-expand adds functions
	// as the program runs): its counts and times cover only the run from
	// then on. 0: traced from the start.
	TracedSinceNs int64
	// TracedUntilNs is when, in ns from the profile's start, the tracer
	// took the function's probe out (a trap probe found hot on a path
	// it would slow down): its counts and times cover the run up to
	// then. 0: traced to the end.
	TracedUntilNs int64
	// Probe is how the tracer saw the function's calls; ProbeNote says
	// why it had no inline probe (empty for an inline one).
	Probe     ProbeKind
	ProbeNote string
}

// ProbeKind is how the tracer observed a function (docs/design.md, Probe
// kinds).
type ProbeKind uint8

const (
	ProbeUnknown ProbeKind = iota // not recorded (older files, merged disagreements)
	ProbeInline                   // a jump to a trampoline: every call, no stop
	ProbeTrap                     // a breakpoint: every call, two stops each
	ProbeNone                     // selected, but no probe could be placed: no calls seen
	ProbeCounted                  // a counting probe (--counted): exact calls per caller in Thread.Arcs, no time
)

var probeNames = [...]string{"unknown", "inline", "trap", "none", "counted"}

func (k ProbeKind) String() string {
	if int(k) < len(probeNames) {
		return probeNames[k]
	}
	return fmt.Sprintf("probe(%d)", k)
}

// Process is one process image. An exec starts a new entry with the same pid.
type Process struct {
	Pid         int
	ParentPid   int      // 0 when unknown or not traced
	Parent      int      // index of the parent process entry, None for the first
	ForkedBy    int      // function index of the forking subroutine, None if none
	ForkedByTid int      // thread that forked it, 0 if none
	ExecOf      int      // index of the image this one replaced by exec, None otherwise
	Exe         string   // the file it runs, links resolved (/proc/PID/exe)
	Argv        []string // its command line (/proc/PID/cmdline) when first seen
	// Comm is its name in /proc/PID/comm when first seen: the base name
	// of the path it was exec'd by (a link's own name, not its target's),
	// 15 bytes at most. Empty in files made before it was recorded.
	Comm     string
	Exited   bool // exit status known
	ExitCode int
	Signal   string // fatal signal name, "" if none
}

// Thread is one thread with its calling-context tree.
type Thread struct {
	Tid       int
	Process   int // index into Profile.Processes
	Name      string
	ParentTid int // 0 for a process's first thread
	SpawnedBy int // function index of the spawning subroutine, None if none
	Level     int // nesting level: 0 for a process's first thread
	TracedNs  int64
	Nodes     []Node // Nodes[0] is the START root; parents precede children
	// Members lists the source threads of a composite thread (after
	// merge); empty for a recorded thread, which is its own only member.
	Members []Member
	// Trees are the calls kept in detail (record --detail), oldest first;
	// DroppedTrees counts older ones dropped beyond the rule's limit.
	Trees        []DetailTree
	DroppedTrees int64
	// Arcs are the calls seen by counting probes (a function traced with
	// --counted): exact calls per caller, no time; they are not in Nodes.
	Arcs []Arc
}

// Member identifies a source thread inside a composite thread.
type Member struct {
	Run       int // index into Meta.Sources, 0 for a single run
	Pid       int
	Tid       int
	Name      string
	ParentTid int
	SpawnedBy int // function index
	Level     int
	TracedNs  int64
}

// Node is one calling context of a thread's CCT (docs/design.md,
// Calling-context trees).
type Node struct {
	Func           int
	Parent         int // node index, None for the root
	Calls          int64
	RecursiveCalls int64
	SelfNs         int64
	TotalNs        int64
	// Call kinds: how the calls were made. Their sum may be below Calls
	// when a kind could not be told (thread entry, in-flight frames).
	DirectCalls   int64
	IndirectCalls int64
	PLTCalls      int64
	// InFlight counts activations already running when tracing began
	// (entered before attach, or copied into a forked child): timed from
	// then, not counted in Calls.
	InFlight int64
	// Elided marks a node that prune re-attached to its nearest kept
	// ancestor: the edge into it skips dropped contexts.
	Elided bool
	// DroppedNs is the self time of pruned-away descendant contexts,
	// folded here so that a thread's time still adds up.
	DroppedNs int64
	// SampledNs is the thread's CPU time sampled while this context was
	// the innermost traced one running (Meta.CPUSamples): in its own code
	// or in code of no traced function it called. A counted function
	// sampled there has a node below it with no calls.
	SampledNs int64
	// DroppedSampledNs is the sampled time of pruned-away descendant
	// contexts, folded here as their self time is into DroppedNs.
	DroppedSampledNs int64
	// Contribs splits a composite node by member thread (merge only).
	Contribs []Contrib
}

// Contrib is one member thread's share of a composite node.
type Contrib struct {
	Member         int // index into Thread.Members
	Calls          int64
	RecursiveCalls int64
	SelfNs         int64
	TotalNs        int64
	// The member's shares of Node.SampledNs and Node.DroppedSampledNs:
	// unlike DroppedNs, sampled time prune folds away is split by member,
	// as Busy takes each member's totals from its own samples.
	SampledNs        int64
	DroppedSampledNs int64
}

// New returns an empty profile with START in place.
func New() *Profile {
	return &Profile{
		Modules:   []Module{{}},
		Functions: []Function{{Module: 0, Name: StartName}},
	}
}

// ModuleName is a module's display name: the base name of its path.
func (p *Profile) ModuleName(m int) string {
	return baseName(p.Modules[m].Path)
}

// FuncName is a function's display name: `module:name` for library
// functions, the plain name for the main executable's and for START.
func (p *Profile) FuncName(f int) string {
	fn := p.Functions[f]
	if fn.Module == 0 || p.isMainModule(fn.Module) {
		return fn.Name
	}
	return FuncKey(p.Modules[fn.Module].Path, fn.Name)
}

// isMainModule reports whether module m is the executable of some process.
func (p *Profile) isMainModule(m int) bool {
	path := p.Modules[m].Path
	if path == p.Meta.Exe {
		return true
	}
	for i := range p.Processes {
		if p.Processes[i].Exe == path {
			return true
		}
	}
	return false
}

// StartedAs names the run's first process as it was started (see
// StartedAs).
func (m *Meta) StartedAs() string { return StartedAs(first(m.Command), m.Comm, m.Exe) }

// StartedAs names the process image as it was started (see StartedAs).
func (pr *Process) StartedAs() string { return StartedAs(first(pr.Argv), pr.Comm, pr.Exe) }

// StartedAs names a process by what the user typed beside the file it
// runs: "redis-server (/usr/bin/redis-check-rdb)" for a program started
// through a link named otherwise, just exe when argv[0]'s base name is
// exe's (comm stands for an empty argv[0]). A process title written over
// argv (redis-server's "/usr/bin/redis-server *:6379") is read as comm,
// which it begins with.
func StartedAs(argv0, comm, exe string) string {
	name := baseName(argv0)
	if name == "" || comm != "" && strings.HasPrefix(name, comm+" ") {
		name = comm
	}
	base := baseName(exe)
	switch {
	case exe == "":
		return name
	case name == "" || name == base:
		return exe
	case argv0 == "" && len(comm) == maxComm && strings.HasPrefix(base, comm):
		return exe // comm is exe's name cut short
	}
	return name + " (" + exe + ")"
}

// maxComm is the longest /proc/PID/comm: the kernel's TASK_COMM_LEN less
// its NUL.
const maxComm = 15

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// FuncKey is the `module:name` key by which filters, calling contexts
// and discovery name a function: the base name of its module's path, a
// colon, its name.
func FuncKey(module, name string) string { return baseName(module) + ":" + name }

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}
