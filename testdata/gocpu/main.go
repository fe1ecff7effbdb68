// Command gocpu burns CPU in a few named functions with runtime/pprof's
// CPU profiler on and writes the profile: the input of profile import's
// end-to-end test (cmd/import_e2e_test.go). The work is fixed (not timed)
// so every function gets its share of samples however busy the machine.
//
//	gocpu OUT.pprof [SCALE]
//
// burnHash spends about half the time in a loop around mix, which the
// compiler inlines (an inlined frame in the profile); burnFib recurses
// (fib within fib); burnSort sorts. SCALE (default 1) multiplies the work,
// about a second of CPU at 1.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
)

// mix is small enough to be inlined into burnHash.
func mix(x uint64) uint64 { return (x ^ x>>29) * 0x9e3779b97f4a7c15 }

//go:noinline
func burnHash(n int) uint64 {
	var h uint64 = 1
	for i := 0; i < n; i++ {
		h = mix(h + uint64(i))
	}
	return h
}

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

//go:noinline
func burnFib(rounds int) int {
	s := 0
	for i := 0; i < rounds; i++ {
		s += fib(27)
	}
	return s
}

//go:noinline
func burnSort(rounds int) int {
	v := make([]uint64, 1<<14)
	s := 0
	for r := 0; r < rounds; r++ {
		x := uint64(r + 1)
		for i := range v {
			x = mix(x)
			v[i] = x
		}
		slices.Sort(v)
		s += int(v[0] & 1)
	}
	return s
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gocpu OUT.pprof [SCALE]")
		os.Exit(2)
	}
	scale := 1.0
	if len(os.Args) > 2 {
		var err error
		if scale, err = strconv.ParseFloat(os.Args[2], 64); err != nil || scale <= 0 {
			fmt.Fprintln(os.Stderr, "gocpu: bad SCALE", os.Args[2])
			os.Exit(2)
		}
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gocpu:", err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "gocpu:", err)
		os.Exit(1)
	}
	h := burnHash(int(3e8 * scale))
	fb := burnFib(int(300 * scale))
	st := burnSort(int(200 * scale))
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "gocpu:", err)
		os.Exit(1)
	}
	fmt.Println(h&1, fb, st)
}
