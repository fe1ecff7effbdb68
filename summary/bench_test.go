package summary_test

import (
	"io"
	"sync"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

var (
	bigOnce sync.Once
	big     *model.Profile
)

// BenchmarkSummary summarises a 1,000,000-node profile of 64 threads
// (goal: under 3 s and 2 GiB per run): Compute alone, Compute and the
// whole JSON document (every function and edge), and Compute with --top
// 20 as tables.
func BenchmarkSummary(b *testing.B) {
	bigOnce.Do(func() { big = modeltest.Synthetic(1_000_000, 64, 1) })
	run := func(b *testing.B, opt summary.Options, write func(io.Writer, *summary.Report) error) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r, err := summary.Compute(big, opt)
			if err != nil {
				b.Fatal(err)
			}
			if write != nil {
				if err := write(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("compute", func(b *testing.B) { run(b, summary.Options{}, nil) })
	b.Run("json", func(b *testing.B) { run(b, summary.Options{}, summary.WriteJSON) })
	b.Run("csv", func(b *testing.B) { run(b, summary.Options{}, summary.WriteCSV) })
	b.Run("table-top20", func(b *testing.B) { run(b, summary.Options{Top: 20}, summary.WriteTable) })
}
