// Package schemacheck checks JSON documents against the subset of JSON
// Schema that the schemas under docs/ use: type (a name or a list of
// names), const, enum, minimum, properties, required,
// additionalProperties: false and items. For tests: it is what keeps a
// JSON writer and its documented schema in step.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
)

// Decode reads JSON keeping numbers as json.Number, so that integers and
// other numbers can be told apart.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Load reads a schema file.
func Load(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema must be an object", path)
	}
	return s, nil
}

// Check returns the places where document doc (as Decode returns it)
// breaks schema, one message each, "$.functions[0].self: ..."; none when
// it conforms.
func Check(schema map[string]any, doc any) []string {
	return check(schema, doc, "$")
}

func check(schema map[string]any, v any, at string) []string {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, a...)) }
	if t, ok := schema["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				s, _ := x.(string)
				types = append(types, s)
			}
		}
		if !slices.ContainsFunc(types, func(typ string) bool { return isType(v, typ) }) {
			fail("%v (%T) is not of type %v", v, v, t)
			return errs
		}
	}
	if c, ok := schema["const"]; ok && v != c {
		fail("%v is not %v", v, c)
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		fail("%v not in %v", v, enum)
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
		req, _ := schema["required"].([]any)
		for _, r := range req {
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
			errs = append(errs, check(ps, obj[k], at+"."+k)...)
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := schema["items"].(map[string]any); ok {
			for i, x := range arr {
				errs = append(errs, check(items, x, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

func isType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}
