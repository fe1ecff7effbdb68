// Package loadgen is a load client for the test server workload
// (testdata/src/server.c): it keeps many connections busy with requests
// and checks every reply exactly against Compute, the Go twin of the
// server's computation.
//
// The protocol is line based: the client sends "N\n" (0 <= N <= MaxN) and
// the server replies "N RESULT\n" with RESULT = Compute(N) in decimal;
// "quit\n" gets "bye\n" and makes the server exit.
package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/profile-dev/profile/internal/workload"
)

// MaxN is the largest request the server accepts.
const MaxN = 1000000

// fibMod: a request N computes fib(N % fibMod).
const fibMod = 16

// Fib is the server's fib: fib(k) = fib(k-1) + fib(k-2), fib(0) = 0,
// fib(1) = 1 (computed here without recursion).
func Fib(k uint64) uint64 {
	var a, b uint64 = 0, 1
	for i := uint64(0); i < k; i++ {
		a, b = b, a+b
	}
	return a
}

// HashMix is the server's hash_mix.
func HashMix(n, f uint64) uint64 {
	h := n*0x9e3779b97f4a7c15 ^ f
	for i := uint64(0); i < 256; i++ {
		h ^= h >> 31
		h *= 0xbf58476d1ce4e5b9
		h += i
	}
	return h
}

// Compute is the server's compute: the RESULT of request n.
func Compute(n uint64) uint64 { return HashMix(n, Fib(n%fibMod)) }

// Reply is the server's exact reply line to request n, newline included.
func Reply(n uint64) string {
	return strconv.FormatUint(n, 10) + " " + strconv.FormatUint(Compute(n), 10) + "\n"
}

// fibCalls[k] is the number of calls of the recursive fib(k).
var fibCalls = func() (c [fibMod]uint64) {
	for k := range c {
		c[k] = 1
		if k >= 2 {
			c[k] += c[k-1] + c[k-2]
		}
	}
	return c
}()

// RequestFuncs are the server functions whose calls depend only on the
// requests answered (the others depend on timing: how reads batch, which
// worker wakes).
var RequestFuncs = []string{"handle_request", "parse_request", "compute", "fib", "hash_mix", "mix_round", "finish", "mix_final", "format_reply"}

// RequestCalls returns the calls of each of RequestFuncs that the server
// makes to answer request n.
func RequestCalls(n uint64) map[string]workload.Counts {
	c := map[string]workload.Counts{}
	addRequestCalls(c, n)
	return c
}

func addRequestCalls(c map[string]workload.Counts, n uint64) {
	for _, f := range RequestFuncs {
		v := c[f]
		if f == "fib" {
			k := fibCalls[n%fibMod]
			v.Calls += k
			v.RecursiveCalls += k - 1
		} else {
			v.Calls++
		}
		c[f] = v
	}
}

// Options tune a Run. The zero value runs until the context ends, with a
// 5 s deadline per request.
type Options struct {
	// Requests, if positive, stops the run after that many requests in
	// all connections together.
	Requests int64
	// Timeout bounds each request: connecting, sending it and reading
	// the whole reply. Default 5 s.
	Timeout time.Duration
	// Seed selects the request sequence; the same seed and connection
	// count give the same requests on each connection.
	Seed uint64
	// Pause is a delay between two requests of one connection (0: none).
	Pause time.Duration
}

// maxErrors is how many failure descriptions a Result keeps.
const maxErrors = 10

// Result counts what a run did.
type Result struct {
	Conns int
	// Requests counts the requests attempted: OK + Wrong + Failed.
	Requests int64
	// OK counts the replies equal to Reply(N).
	OK int64
	// Wrong counts the replies that arrived but differ.
	Wrong int64
	// Failed counts the requests that got no complete reply: connection
	// refused or broken, or Timeout passed.
	Failed int64
	// Elapsed is the run's duration, from the first request to the end
	// of the last.
	Elapsed time.Duration
	// MaxLatency is the longest time a request took to get its reply.
	MaxLatency time.Duration
	// Calls sums RequestCalls over the requests that got a reply (OK or
	// wrong): what the server's own counters must show for them.
	Calls map[string]workload.Counts
	// Errors describes the first failures; WrongReplies the first wrong
	// replies (up to 10 each).
	Errors       []string
	WrongReplies []string
}

// PerSecond is the rate of OK replies.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

func (r Result) String() string {
	return fmt.Sprintf("%d conns, %d requests, %d ok, %d wrong, %d failed in %.1f s (%.0f/s, max latency %v)",
		r.Conns, r.Requests, r.OK, r.Wrong, r.Failed, r.Elapsed.Seconds(), r.PerSecond(),
		r.MaxLatency.Round(time.Millisecond))
}

// Add accumulates o into r (for several runs against one server): counts
// and calls add up, Elapsed too, Conns and MaxLatency take the maximum.
func (r *Result) Add(o Result) {
	r.Conns = max(r.Conns, o.Conns)
	r.Requests += o.Requests
	r.OK += o.OK
	r.Wrong += o.Wrong
	r.Failed += o.Failed
	r.Elapsed += o.Elapsed
	r.MaxLatency = max(r.MaxLatency, o.MaxLatency)
	if r.Calls == nil {
		r.Calls = map[string]workload.Counts{}
	}
	for f, c := range o.Calls {
		v := r.Calls[f]
		v.Calls += c.Calls
		v.RecursiveCalls += c.RecursiveCalls
		r.Calls[f] = v
	}
	for _, e := range o.Errors {
		if len(r.Errors) < maxErrors {
			r.Errors = append(r.Errors, e)
		}
	}
	for _, e := range o.WrongReplies {
		if len(r.WrongReplies) < maxErrors {
			r.WrongReplies = append(r.WrongReplies, e)
		}
	}
}

// RequestN is the n of request j on connection i for seed: deterministic,
// spread over 0..MaxN.
func RequestN(seed uint64, i, j int) uint64 {
	x := seed ^ uint64(i)<<40 ^ uint64(j)
	// splitmix64
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return x % (MaxN + 1)
}

// Run opens conns connections to addr and sends requests on each, one at a
// time, until ctx ends or opt.Requests have been sent; a request in flight
// when ctx ends still completes (within opt.Timeout). Every reply is
// checked against Reply. A connection that fails is counted and opened
// again (after a 50 ms pause). Run returns an error only for bad arguments
// or when the connections cannot be opened at the start.
func Run(ctx context.Context, addr string, conns int, opt Options) (Result, error) {
	if conns <= 0 {
		return Result{}, fmt.Errorf("loadgen: %d connections", conns)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Second
	}
	d := net.Dialer{Timeout: opt.Timeout}
	cs := make([]net.Conn, conns)
	for i := range cs {
		c, err := d.Dial("tcp", addr) // not cut short by ctx: that is no error
		if err != nil {
			for _, c := range cs[:i] {
				c.Close()
			}
			return Result{}, fmt.Errorf("loadgen: %w", err)
		}
		cs[i] = c
	}
	var tickets atomic.Int64
	claim := func() bool {
		return opt.Requests <= 0 || tickets.Add(1) <= opt.Requests
	}
	results := make([]Result, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = client{i: i, addr: addr, opt: opt, dialer: &d}.run(ctx, cs[i], claim)
		}()
	}
	wg.Wait()
	total := Result{Conns: conns, Calls: map[string]workload.Counts{}}
	for _, r := range results {
		total.Add(r)
	}
	total.Conns = conns
	total.Elapsed = time.Since(start)
	return total, nil
}

type client struct {
	i      int
	addr   string
	opt    Options
	dialer *net.Dialer
}

func (cl client) run(ctx context.Context, c net.Conn, claim func() bool) Result {
	r := Result{Calls: map[string]workload.Counts{}}
	note := func(list *[]string, format string, args ...any) {
		if len(*list) < maxErrors {
			*list = append(*list, fmt.Sprintf("conn %d: ", cl.i)+fmt.Sprintf(format, args...))
		}
	}
	rd := bufio.NewReader(c)
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	pause := func(d time.Duration) {
		if d <= 0 {
			return
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	for j := 0; ctx.Err() == nil && claim(); j++ {
		n := RequestN(cl.opt.Seed, cl.i, j)
		r.Requests++
		t0 := time.Now()
		if c == nil {
			// Not tied to ctx: ending the run must not count as a failure.
			nc, err := cl.dialer.Dial("tcp", cl.addr)
			if err != nil {
				r.Failed++
				note(&r.Errors, "request %d (n=%d): %v", j, n, err)
				pause(50 * time.Millisecond)
				continue
			}
			c, rd = nc, bufio.NewReader(nc)
		}
		reply, err := exchange(c, rd, strconv.FormatUint(n, 10)+"\n", t0.Add(cl.opt.Timeout))
		if lat := time.Since(t0); lat > r.MaxLatency {
			r.MaxLatency = lat
		}
		if err != nil {
			r.Failed++
			note(&r.Errors, "request %d (n=%d): %v", j, n, err)
			c.Close()
			c = nil
			pause(50 * time.Millisecond)
			continue
		}
		addRequestCalls(r.Calls, n)
		if want := Reply(n); reply != want {
			r.Wrong++
			note(&r.WrongReplies, "request %d: reply %q, want %q", j, reply, want)
			// The stream may be out of step: start afresh.
			c.Close()
			c = nil
			continue
		}
		r.OK++
		pause(cl.opt.Pause)
	}
	return r
}

// exchange sends one request line and reads one reply line before deadline.
func exchange(c net.Conn, rd *bufio.Reader, req string, deadline time.Time) (string, error) {
	if err := c.SetDeadline(deadline); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte(req)); err != nil {
		return "", err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		if line != "" {
			err = fmt.Errorf("%w after partial reply %q", err, line)
		}
		return "", err
	}
	return line, nil
}

// Quit asks the server at addr to exit: it must answer "bye".
func Quit(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return fmt.Errorf("loadgen: quit: %w", err)
	}
	defer c.Close()
	reply, err := exchange(c, bufio.NewReader(c), "quit\n", time.Now().Add(timeout))
	if err != nil {
		return fmt.Errorf("loadgen: quit: %w", err)
	}
	if reply != "bye\n" {
		return fmt.Errorf("loadgen: quit: reply %q, want \"bye\\n\"", reply)
	}
	return nil
}

// Report is what the server prints on stdout when it exits.
type Report struct {
	Port     int   // from the "port=" line, 0 if absent
	Requests int64 // the "requests=" line
	// Counters are the server's own counts of every function's calls.
	Counters map[string]workload.Counts
}

// ParseReport reads the server's stdout: "port=N", then at exit
// "requests=N" and one "counter NAME CALLS RECURSIVE" line per function.
func ParseReport(stdout string) (*Report, error) {
	rep := &Report{Requests: -1, Counters: map[string]workload.Counts{}}
	for _, line := range strings.Split(stdout, "\n") {
		switch f := strings.Fields(line); {
		case len(f) == 0:
		case strings.HasPrefix(line, "port="):
			p, err := strconv.Atoi(strings.TrimPrefix(line, "port="))
			if err != nil {
				return nil, fmt.Errorf("loadgen: bad line %q", line)
			}
			rep.Port = p
		case strings.HasPrefix(line, "requests="):
			n, err := strconv.ParseInt(strings.TrimPrefix(line, "requests="), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("loadgen: bad line %q", line)
			}
			rep.Requests = n
		case f[0] == "counter" && len(f) == 4:
			c, err1 := strconv.ParseUint(f[2], 10, 64)
			r, err2 := strconv.ParseUint(f[3], 10, 64)
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("loadgen: bad line %q", line)
			}
			rep.Counters[f[1]] = workload.Counts{Calls: c, RecursiveCalls: r}
		default:
			return nil, fmt.Errorf("loadgen: unexpected server output line %q", line)
		}
	}
	if rep.Requests < 0 {
		return nil, fmt.Errorf("loadgen: no requests= line in server output %q", stdout)
	}
	return rep, nil
}

// CheckCalls compares the server's counters of RequestFuncs with want, the
// Calls of every Result run against this server added up; nil if equal.
func (rep *Report) CheckCalls(want map[string]workload.Counts) error {
	var diffs []string
	for _, f := range RequestFuncs {
		if got, w := rep.Counters[f], want[f]; got != w {
			diffs = append(diffs, fmt.Sprintf("%s: server counted %+v, requests imply %+v", f, got, w))
		}
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}
