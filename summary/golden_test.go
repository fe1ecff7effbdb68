package summary_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/golden"
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

// A tiny checker for the JSON Schema subset docs/summary.schema.json
// uses: type, const, enum, minimum, properties, required,
// additionalProperties: false and items.
func validate(schema map[string]any, v any, at string) []string {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, a...)) }
	if typ, ok := schema["type"].(string); ok {
		okType := false
		switch typ {
		case "object":
			_, okType = v.(map[string]any)
		case "array":
			_, okType = v.([]any)
		case "string":
			_, okType = v.(string)
		case "boolean":
			_, okType = v.(bool)
		case "number":
			_, okType = v.(json.Number)
		case "integer":
			if n, ok := v.(json.Number); ok {
				_, err := n.Int64()
				okType = err == nil
			}
		default:
			fail("schema type %q not supported by the checker", typ)
		}
		if !okType {
			fail("%v (%T) is not of type %s", v, v, typ)
			return errs
		}
	}
	if c, ok := schema["const"]; ok && v != c {
		fail("%v is not %v", v, c)
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			fail("%v not in %v", v, enum)
		}
	}
	if min, ok := schema["minimum"].(json.Number); ok {
		m, _ := min.Float64()
		if n, ok := v.(json.Number); ok {
			if f, _ := n.Float64(); f < m {
				fail("%v below the minimum %v", v, m)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := schema["properties"].(map[string]any)
		for _, r := range schema["required"].([]any) {
			if _, ok := obj[r.(string)]; !ok {
				fail("missing required field %q", r)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if ap, ok := schema["additionalProperties"].(bool); ok && !ap {
					fail("unexpected field %q", k)
				}
				continue
			}
			errs = append(errs, validate(ps, obj[k], at+"."+k)...)
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, x := range arr {
				errs = append(errs, validate(items, x, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

func decodeNumbers(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	must(t, dec.Decode(&v))
	return v
}

func TestJSONSchema(t *testing.T) {
	raw, err := os.ReadFile("../docs/summary.schema.json")
	must(t, err)
	schema := decodeNumbers(t, raw).(map[string]any)
	for name, r := range reports(t) {
		var buf bytes.Buffer
		must(t, summary.WriteJSON(&buf, r))
		if errs := validate(schema, decodeNumbers(t, buf.Bytes()), "$"); len(errs) > 0 {
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
		if errs := validate(schema, decodeNumbers(t, []byte(doc)), "$"); len(errs) == 0 {
			t.Errorf("schema accepts a document with a %s", name)
		}
	}
}
