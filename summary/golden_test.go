package summary_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/golden"
	"github.com/profile-dev/profile/internal/schemacheck"
	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

func TestGolden(t *testing.T) {
	writers := map[string]func(io.Writer, *summary.Report) error{
		"txt": summary.WriteTable, "md": summary.WriteMarkdown, "json": summary.WriteJSON, "csv": summary.WriteCSV,
	}
	cases := map[string]struct {
		p   func() *model.Profile
		opt summary.Options
	}{
		"sample":             {modeltest.Sample, summary.Options{}},
		"sample-top3-pid100": {modeltest.Sample, summary.Options{Top: 3, Pid: 100}},
		"sampled":            {modeltest.Sampled, summary.Options{}}, // values sampled: no call counts
		"cpp":                {modeltest.CPP, summary.Options{}},     // short names in the tables
		"sample-busy":        {modeltest.Sample, summary.Options{Busy: true}},
		"cpp-traced-later":   {cppTracedLater, summary.Options{}},    // record --auto-expand: a note, traced_since_ns
		"counted":            {modeltest.Counted, summary.Options{}}, // record --counted: calls, no times, a note
		// record --sample: busy times sampled, a counted function's too
		"cpu-sampled": {modeltest.CPUSampled, summary.Options{Busy: true}},
		"cpu-wall":    {modeltest.CPUSampled, summary.Options{}}, // the same, measured
	}
	for name, c := range cases {
		r := mustCompute(t, c.p(), c.opt)
		for ext, w := range writers {
			var buf bytes.Buffer
			must(t, w(&buf, r))
			golden.Check(t, name+"."+ext, buf.Bytes())
		}
	}
}

// summarySchema is docs/summary.schema.json.
func summarySchema(t *testing.T) map[string]any {
	t.Helper()
	schema, err := schemacheck.Load("../docs/summary.schema.json")
	must(t, err)
	return schema
}

// schemaErrors are the places where the JSON document data breaks schema.
func schemaErrors(t *testing.T, schema map[string]any, data []byte) []string {
	t.Helper()
	doc, err := schemacheck.Decode(data)
	must(t, err)
	return schemacheck.Check(schema, doc)
}

func TestJSONSchema(t *testing.T) {
	schema := summarySchema(t)
	for name, r := range reports(t) {
		var buf bytes.Buffer
		must(t, summary.WriteJSON(&buf, r))
		if errs := schemaErrors(t, schema, buf.Bytes()); len(errs) > 0 {
			t.Errorf("%s does not match the schema:\n%s", name, strings.Join(errs, "\n"))
		}
	}
	// the checker does reject what the schema forbids
	bad := map[string]string{
		"extra field":   `{"format":"profile-summary/1","meta":{},"totals":{},"functions":[],"edges":[],"modules":[],"threads":[],"processes":[],"x":1}`,
		"float time":    `{"functions":[{"self_ns":1.5}]}`,
		"string number": `{"totals":{"nodes":"3"}}`,
		"bad kind":      `{"edges":[{"kind":"jump"}]}`,
	}
	for name, doc := range bad {
		if errs := schemaErrors(t, schema, []byte(doc)); len(errs) == 0 {
			t.Errorf("schema accepts a document with a %s", name)
		}
	}
}
