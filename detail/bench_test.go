package detail

import "testing"

// BenchmarkPruned: calls of selected functions that are not kept (--slow
// 1h, or --detail-if 'ret<0' with every call returning a positive value),
// nested as workload (a)'s loop nests them: the pruning every such
// call costs the tracer. ns/op is per call.
func BenchmarkPruned(b *testing.B) {
	c, err := ParseCond("ret<0")
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []struct {
		name string
		rule Rule
	}{{"slow", Rule{SlowNs: 3600e9, Limit: 1000}}, {"ret<0", Rule{If: &c, Limit: 1000}},
		{"ret<0-gated", Rule{If: &c, Limit: 1000, Gated: true}}} {
		b.Run(r.name, func(b *testing.B) { pruned(b, NewThread(&r.rule)) })
	}
}

func pruned(b *testing.B, t *Thread) {
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
