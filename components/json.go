package components

import (
	"encoding/json"
	"io"
)

// WriteJSON writes r as the indented profile-components/1 document
// (docs/components.md).
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
