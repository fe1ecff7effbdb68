package model_test

import (
	"bytes"
	"testing"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// The file-format goals (docs/benchmarks.md): a million CCT nodes over 64
// threads written and read in under 3 s and 2 GiB on a 2-core machine.

func BenchmarkWrite(b *testing.B) {
	p := modeltest.Synthetic(1_000_000, 64, 1)
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		if err := model.Write(&buf, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/file")
}

func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	if err := model.Write(&buf, modeltest.Synthetic(1_000_000, 64, 1)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := model.Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGraph(b *testing.B) {
	p := modeltest.Synthetic(1_000_000, 64, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Graph(model.Scope{})
	}
}
