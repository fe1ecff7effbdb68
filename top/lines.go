package top

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/profile-dev/profile/internal/human"
)

// Header is what a view says of the session besides the rows.
type Header struct {
	Pid             int
	Exe             string
	Threads         int // live threads
	Processes       int
	InlineFunctions int
	TrapFunctions   int
	TracerCPU       float64 // the profiler's CPU time over the interval, in CPUs
	Final           bool    // the last view: the profile after detach
}

// lineJSON is one line of --format json: the interval's numbers of every
// function called in it. Summing calls over every line gives the final
// profile's counts.
type lineJSON struct {
	ElapsedNs   int64     `json:"elapsed_ns"`
	IntervalNs  int64     `json:"interval_ns"`
	Pid         int       `json:"pid"`
	Scope       string    `json:"scope"`
	LiveThreads int       `json:"live_threads"`
	Calls       int64     `json:"calls"`
	CallsPerSec float64   `json:"calls_per_sec"`
	TracedNs    int64     `json:"traced_ns"`
	TracerCPU   float64   `json:"tracer_cpu"`
	Inline      int       `json:"inline_functions"`
	Trap        int       `json:"trap_functions"`
	Final       bool      `json:"final"`
	Functions   []funcRow `json:"functions"`
	Threads     []thread  `json:"threads"`
}

type thread struct {
	Pid         int      `json:"pid"`
	Tid         int      `json:"tid"`
	Name        string   `json:"name"`
	CPUPct      *float64 `json:"cpu_pct,omitempty"`
	BusyNs      int64    `json:"busy_ns"`
	TracedNs    int64    `json:"traced_ns"`
	Calls       int64    `json:"calls"`
	CallsPerSec float64  `json:"calls_per_sec"`
	BusyNsAll   int64    `json:"busy_ns_since_attach"`
}

type funcRow struct {
	Name        string  `json:"name"`
	Module      string  `json:"module"`
	Calls       int64   `json:"calls"`
	CallsPerSec float64 `json:"calls_per_sec"`
	SelfNs      int64   `json:"self_ns"`
	TotalNs     int64   `json:"total_ns"`
	Share       float64 `json:"share"`
	Threads     int     `json:"threads"`
	CallsAll    int64   `json:"calls_since_attach"`
	SelfNsAll   int64   `json:"self_ns_since_attach"`
	TotalNsAll  int64   `json:"total_ns_since_attach"`
}

// WriteJSON writes v as one JSON line: the rows with something in the
// interval, in v's order.
func WriteJSON(w io.Writer, h Header, v View) error {
	l := lineJSON{ElapsedNs: int64(v.Elapsed), IntervalNs: int64(v.Interval), Pid: h.Pid, Scope: scopeName(v),
		LiveThreads: h.Threads, Calls: v.DCalls, TracedNs: v.DTracedNs, TracerCPU: h.TracerCPU,
		Inline: h.InlineFunctions, Trap: h.TrapFunctions, Final: h.Final, Functions: []funcRow{},
		Threads: []thread{}}
	if v.Interval > 0 {
		l.CallsPerSec = float64(v.DCalls) / v.Interval.Seconds()
	}
	for _, r := range v.Rows {
		if r.DCalls == 0 && r.DSelfNs == 0 && r.DTotalNs == 0 {
			continue
		}
		l.Functions = append(l.Functions, funcRow{Name: r.Name, Module: r.Module, Calls: r.DCalls,
			CallsPerSec: r.CallsPerSec, SelfNs: r.DSelfNs, TotalNs: r.DTotalNs, Share: r.Share,
			Threads: r.Threads, CallsAll: r.Calls, SelfNsAll: r.SelfNs, TotalNsAll: r.TotalNs})
	}
	for _, r := range v.ThreadList {
		j := thread{Pid: r.Pid, Tid: r.Tid, Name: r.Name, BusyNs: r.BusyNs, TracedNs: r.TracedNs, Calls: r.DCalls,
			CallsPerSec: r.CallsPerSec, BusyNsAll: r.BusyNsAll}
		if r.HasCPU {
			j.CPUPct = &r.CPU
		}
		l.Threads = append(l.Threads, j)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Title is the one-line description of a view.
func Title(h Header, v View) string {
	rate := 0.0
	if v.Interval > 0 {
		rate = float64(v.DCalls) / v.Interval.Seconds()
	}
	// The final view comes after the detach, when no thread is traced
	// any more: it counts the threads its profile holds.
	threads := h.Threads
	if h.Final {
		threads = v.Threads
	}
	s := fmt.Sprintf("pid %d %s  %s  threads %d  %s calls/s  probes %d inline %d trap  tracer CPU %.1f%%  %s times",
		h.Pid, h.Exe, v.Elapsed.Truncate(100*time.Millisecond), threads, human.Count(int64(rate+0.5)),
		h.InlineFunctions, h.TrapFunctions, 100*h.TracerCPU, scopeName(v))
	if h.Final {
		s += "  (final)"
	}
	return s
}

// scopeName is the times a view shows, as --scope names them.
func scopeName(v View) string {
	if v.Wall {
		return "wall"
	}
	return "busy"
}

// Header of the table: interval columns, then since attach.
// The screen draws the same columns (top/screen.go).
var tableHeader = []string{"CALLS/S", "SELF", "SELF%", "TOTAL", "THREADS", "CALLS (ALL)", "SELF (ALL)", "FUNCTION"}

// Cells are a row's cells in tableHeader's order.
func Cells(r Row) []string {
	return []string{human.Count(int64(r.CallsPerSec + 0.5)), human.Duration(r.DSelfNs), human.Percent(100 * r.Share),
		human.Duration(r.DTotalNs), strconv.Itoa(r.Threads), human.Count(r.Calls), human.Duration(r.SelfNs), r.Display}
}

// Header of the thread list: the interval's numbers.
// The screen draws the same columns (top/screen.go).
var threadHeader = []string{"PID", "TID", "CPU%", "BUSY", "TRACED", "CALLS/S", "THREAD"}

// ThreadCells are a thread's cells in threadHeader's order; "-" where
// /proc could not give its CPU time.
func ThreadCells(r ThreadRow) []string {
	cpu := "-"
	if r.HasCPU {
		cpu = human.Percent(r.CPU)
	}
	return []string{strconv.Itoa(r.Pid), strconv.Itoa(r.Tid), cpu, human.Duration(r.BusyNs),
		human.Duration(r.TracedNs), human.Count(int64(r.CallsPerSec + 0.5)), r.Name}
}

// WriteTable writes the title and the first n rows (all if n <= 0) as a
// plain table, then the first n threads as another, for a pipe.
func WriteTable(w io.Writer, h Header, v View, n int) error {
	if _, err := fmt.Fprintln(w, Title(h, v)); err != nil {
		return err
	}
	rows := v.Rows
	if n > 0 && len(rows) > n {
		rows = rows[:n]
	}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = Cells(r)
	}
	if err := writeTable(w, tableHeader, cells); err != nil {
		return err
	}
	threads := v.ThreadList
	if n > 0 && len(threads) > n {
		threads = threads[:n]
	}
	cells = make([][]string, len(threads))
	for i, r := range threads {
		cells[i] = ThreadCells(r)
	}
	if err := writeTable(w, threadHeader, cells); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// writeTable writes one plain table: numbers right-aligned, the last
// column (a name) left.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	right := make([]tw.Align, len(header))
	for i := range right {
		right[i] = tw.AlignRight
	}
	right[len(right)-1] = tw.AlignLeft
	tb := tablewriter.NewTable(w,
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: right}),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: right}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoFormat(tw.Off),
	)
	tb.Header(anys(header)...)
	for _, r := range rows {
		if err := tb.Append(anys(r)...); err != nil {
			return err
		}
	}
	return tb.Render()
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
