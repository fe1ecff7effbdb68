package summary

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// WriteJSON writes r as the indented profile-summary/1 document: the
// output of encoding/json's Encoder with two-space indentation and HTML
// escaping off (C++ names keep their <>), written field by field so that
// summaries of millions of edges stream out without a second copy.
func WriteJSON(w io.Writer, r *Report) error {
	j := &jsonWriter{w: w, b: make([]byte, 0, 1<<16)}
	j.raw("{")
	j.key(1, "format", true)
	j.str(r.Format)
	j.key(1, "meta", false)
	m := r.Meta
	j.raw("{")
	j.key(2, "command", true)
	j.strings(2, m.Command)
	j.key(2, "exe", false)
	j.str(m.Exe)
	j.intField(2, "pid", int64(m.Pid))
	j.key(2, "mode", false)
	j.str(m.Mode)
	j.intField(2, "duration_ns", m.DurationNs)
	j.key(2, "partial", false)
	j.raw(strconv.FormatBool(m.Partial))
	j.key(2, "detached", false)
	j.raw(strconv.FormatBool(m.Detached))
	j.intField(2, "stops", m.Stops)
	j.intField(2, "traced_calls", m.TracedCalls)
	j.key(2, "warnings", false)
	j.strings(2, m.Warnings)
	j.key(2, "cpu_samples", false)
	j.cpuSamples(m.CPUSamples)
	j.end(1, '}')
	t := r.Totals
	j.key(1, "totals", false)
	j.raw("{")
	for i, kv := range []struct {
		k string
		v int64
	}{{"nodes", int64(t.Nodes)}, {"edges", int64(t.Edges)}, {"calls", t.Calls}, {"direct_calls", t.DirectCalls},
		{"indirect_calls", t.IndirectCalls}, {"plt_calls", t.PLTCalls}, {"threads", int64(t.Threads)},
		{"processes", int64(t.Processes)}, {"max_nesting_level", int64(t.MaxNestingLevel)},
		{"max_recursion_depth", int64(t.MaxRecursionDepth)}, {"traced_ns", t.TracedNs}, {"blocked_ns", t.BlockedNs},
		{"waiting_cpu_ns", t.WaitingCPUNs}, {"wall_ns", t.WallNs}} {
		j.key(2, kv.k, i == 0)
		j.int(kv.v)
	}
	j.key(2, "times", false)
	j.str(t.Times)
	j.key(2, "sampled", false)
	j.raw(strconv.FormatBool(t.Sampled))
	j.key(2, "busy_sampled", false)
	j.raw(strconv.FormatBool(t.BusySampled))
	j.key(2, "waiting_cpu_sampled", false)
	j.raw(strconv.FormatBool(t.WaitingCPU))
	j.end(1, '}')
	array(j, "functions", r.Functions, func(f *Function) {
		j.key(3, "name", true)
		j.str(f.Name)
		j.key(3, "module", false)
		j.str(f.Module)
		j.funcNumbers(3, &f.FuncNumbers)
		if f.TracedSinceNs != 0 {
			j.intField(3, "traced_since_ns", f.TracedSinceNs)
		}
		if f.TracedUntilNs != 0 {
			j.intField(3, "traced_until_ns", f.TracedUntilNs)
		}
		writeFunctionShares(j, f.Threads)
	})
	array(j, "edges", r.Edges, func(e *Edge) {
		j.key(3, "caller", true)
		j.str(e.Caller)
		j.key(3, "callee", false)
		j.str(e.Callee)
		j.key(3, "caller_module", false)
		j.str(e.CallerModule)
		j.key(3, "callee_module", false)
		j.str(e.CalleeModule)
		j.key(3, "kind", false)
		j.str(e.Kind)
		j.edgeNumbers(3, &e.EdgeNumbers)
		writeEdgeShares(j, e.Threads)
	})
	array(j, "modules", r.Modules, func(x *Module) {
		j.key(3, "module", true)
		j.str(x.Module)
		j.intField(3, "self_ns", x.SelfNs)
		j.floatField(3, "self_pct", x.SelfPct)
		j.key(3, "dynamic_only", false)
		j.raw(strconv.FormatBool(x.DynamicOnly))
	})
	array(j, "threads", r.Threads, func(x *Thread) {
		j.key(3, "tid", true)
		j.int(int64(x.Tid))
		j.intField(3, "pid", int64(x.Pid))
		j.key(3, "name", false)
		j.str(x.Name)
		j.intField(3, "parent_tid", int64(x.ParentTid))
		j.key(3, "spawned_by", false)
		j.str(x.SpawnedBy)
		j.intField(3, "nesting_level", int64(x.NestingLevel))
		j.intField(3, "traced_ns", x.TracedNs)
		if x.Number != nil {
			j.intField(3, "number", int64(*x.Number))
		}
	})
	array(j, "processes", r.Processes, func(x *Process) {
		j.key(3, "pid", true)
		j.int(int64(x.Pid))
		j.intField(3, "parent_pid", int64(x.ParentPid))
		j.key(3, "forked_by", false)
		j.str(x.ForkedBy)
		j.key(3, "exe", false)
		j.str(x.Exe)
		j.intField(3, "exit_code", int64(x.ExitCode))
		j.key(3, "signal", false)
		j.str(x.Signal)
		j.key(3, "state", false)
		j.str(x.State)
	})
	j.raw("\n}\n")
	return j.flush(true)
}

// array writes the top-level field name as an array of objects.
func array[T any](j *jsonWriter, name string, s []T, fields func(*T)) {
	j.key(1, name, false)
	if len(s) == 0 {
		j.raw("[]")
		return
	}
	j.raw("[")
	for i := range s {
		j.elem(2, i == 0)
		j.raw("{")
		fields(&s[i])
		j.end(2, '}')
		if j.flush(false) != nil {
			return
		}
	}
	j.end(1, ']')
}

type jsonWriter struct {
	w   io.Writer
	b   []byte
	err error
}

const indentSpaces = "                "

func (j *jsonWriter) raw(s string) { j.b = append(j.b, s...) }

func (j *jsonWriter) newline(level int) {
	j.b = append(j.b, '\n')
	for ; level > 8; level -= 8 {
		j.b = append(j.b, indentSpaces...)
	}
	j.b = append(j.b, indentSpaces[:2*level]...)
}

// key starts a field at an indentation level.
func (j *jsonWriter) key(level int, name string, first bool) {
	if !first {
		j.b = append(j.b, ',')
	}
	j.newline(level)
	j.b = append(j.b, '"')
	j.b = append(j.b, name...)
	j.b = append(j.b, '"', ':', ' ')
}

// elem starts an array element.
func (j *jsonWriter) elem(level int, first bool) {
	if !first {
		j.b = append(j.b, ',')
	}
	j.newline(level)
}

// end closes an object or array whose opening is at level.
func (j *jsonWriter) end(level int, c byte) {
	j.newline(level)
	j.b = append(j.b, c)
}

func (j *jsonWriter) int(v int64) { j.b = strconv.AppendInt(j.b, v, 10) }

func (j *jsonWriter) intField(level int, name string, v int64) {
	j.key(level, name, false)
	j.int(v)
}

func (j *jsonWriter) floatField(level int, name string, f float64) {
	j.key(level, name, false)
	// as encoding/json: ES6 number formatting
	if math.IsInf(f, 0) || math.IsNaN(f) {
		f = 0
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	j.b = strconv.AppendFloat(j.b, f, format, -1, 64)
	if format == 'e' {
		n := len(j.b)
		if n >= 4 && j.b[n-4] == 'e' && j.b[n-3] == '-' && j.b[n-2] == '0' {
			j.b[n-2] = j.b[n-1]
			j.b = j.b[:n-1]
		}
	}
}

// str writes a JSON string: plain printable ASCII directly, anything else
// through encoding/json.
// strings writes an array of strings whose key is at level.
func (j *jsonWriter) strings(level int, ss []string) {
	if len(ss) == 0 {
		j.raw("[]")
		return
	}
	j.raw("[")
	for i, s := range ss {
		j.elem(level+1, i == 0)
		j.str(s)
	}
	j.end(level, ']')
}

func (j *jsonWriter) str(s string) {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		j.b = append(j.b, '"')
		j.b = append(j.b, s...)
		j.b = append(j.b, '"')
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	j.b = append(j.b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// flush writes the buffer out when it is large, or always at the end.
func (j *jsonWriter) flush(final bool) error {
	if j.err == nil && (final || len(j.b) >= 1<<15) {
		_, j.err = j.w.Write(j.b)
		j.b = j.b[:0]
	}
	return j.err
}

// cpuSamples writes meta's cpu_samples: null when not sampled.
func (j *jsonWriter) cpuSamples(c *CPUSamples) {
	if c == nil {
		j.raw("null")
		return
	}
	j.raw("{")
	j.key(3, "period_ns", true)
	j.int(c.PeriodNs)
	j.intField(3, "samples", c.Samples)
	j.intField(3, "kernel", c.Kernel)
	j.intField(3, "in_probes", c.InProbes)
	j.floatField(3, "in_probes_pct", c.InProbesPct)
	j.intField(3, "lost", c.Lost)
	j.key(3, "with_kernel", false)
	j.raw(strconv.FormatBool(c.WithKernel))
	j.key(3, "not_sampled", false)
	j.str(c.NotSampled)
	j.end(2, '}')
}

// funcNumbers and edgeNumbers write the numbers of a function or an edge,
// in the scope or in one thread, as fields at depth d: for a counted one,
// "counted" and no times (counted.go).
func (j *jsonWriter) funcNumbers(d int, n *FuncNumbers) {
	j.intField(d, "calls", n.Calls)
	j.intField(d, "recursive_calls", n.RecursiveCalls)
	if n.Counted {
		j.key(d, "counted", false)
		j.raw("true")
		return
	}
	j.intField(d, "self_ns", n.SelfNs)
	j.intField(d, "total_ns", n.TotalNs)
	j.floatField(d, "self_pct", n.SelfPct)
	j.floatField(d, "total_pct", n.TotalPct)
}

func (j *jsonWriter) edgeNumbers(d int, n *EdgeNumbers) {
	j.intField(d, "calls", n.Calls)
	j.intField(d, "recursive_calls", n.RecursiveCalls)
	if n.Counted {
		j.key(d, "counted", false)
		j.raw("true")
		return
	}
	j.intField(d, "total_ns", n.TotalNs)
	j.floatField(d, "total_pct", n.TotalPct)
}
