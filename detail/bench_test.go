package detail

import "testing"

// BenchmarkPruned: calls of selected functions that are not kept (--slow
// 1h), nested as workload (a)'s loop nests them: the pruning every such
// call costs the tracer. ns/op is per call.
func BenchmarkPruned(b *testing.B) {
	t := NewThread(&Rule{SlowNs: 3600e9, Limit: 1000})
	var now int64
	t.Enter(0, now, false)
	for i := 0; i < b.N; i += 12 {
		for d := 0; d < 10; d++ {
			now++
			t.Enter(1, now, true)
		}
		now++
		t.Enter(2, now, true)
		now++
		t.Exit(now, 3, true)
		for d := 0; d < 10; d++ {
			now++
			t.Exit(now, 1, true)
		}
		now++
		t.Enter(2, now, true)
		now++
		t.Exit(now, 3, true)
	}
}
