package schemacheck_test

import (
	"strings"
	"testing"

	"github.com/profile-dev/profile/internal/schemacheck"
)

func TestCheck(t *testing.T) {
	schema, err := schemacheck.Decode([]byte(`{
		"type": "object", "additionalProperties": false, "required": ["format", "rows"],
		"properties": {
			"format": {"type": "string", "const": "x/1"},
			"rows": {"type": "array", "items": {
				"type": "object", "required": ["n"],
				"properties": {
					"n": {"type": "integer", "minimum": 0},
					"rel": {"type": ["number", "null"]},
					"kind": {"type": "string", "enum": ["a", "b"]},
					"ok": {"type": "boolean"}
				}}}
		}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ doc, want string }{
		{`{"format": "x/1", "rows": [{"n": 3, "rel": 1.5, "kind": "a", "ok": true}, {"n": 0, "rel": null, "extra": 1}]}`, ""},
		{`{"format": "x/2", "rows": []}`, `$.format: x/2 is not x/1`},
		{`{"format": "x/1"}`, `$: missing required field "rows"`},
		{`{"format": "x/1", "rows": [], "more": 1}`, `$: unexpected field "more"`},
		{`{"format": "x/1", "rows": [{"n": 1.5}]}`, `$.rows[0].n: 1.5 (json.Number) is not of type integer`},
		{`{"format": "x/1", "rows": [{"n": -1}]}`, `$.rows[0].n: -1 below the minimum 0`},
		{`{"format": "x/1", "rows": [{"n": 1, "rel": "1"}]}`, `$.rows[0].rel: 1 (string) is not of type [number null]`},
		{`{"format": "x/1", "rows": [{"n": 1, "kind": "c"}]}`, `$.rows[0].kind: c not in [a b]`},
		{`{"format": "x/1", "rows": [{"n": 1, "ok": 1}]}`, `$.rows[0].ok: 1 (json.Number) is not of type boolean`},
		{`{"format": "x/1", "rows": {}}`, `$.rows: map[] (map[string]interface {}) is not of type array`},
	}
	for _, c := range cases {
		doc, err := schemacheck.Decode([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(schemacheck.Check(schema.(map[string]any), doc), "\n"); got != c.want {
			t.Errorf("Check(%s) = %q, want %q", c.doc, got, c.want)
		}
	}
}
