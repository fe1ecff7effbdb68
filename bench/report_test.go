package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCheckSections(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.md")
	text := "# x\n<!-- fidelity:begin -->\nold\n<!-- fidelity:end -->\n<!-- live:end -->\n<!-- live:begin -->\n"
	if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		sections   []string
		ok         bool
	}{
		{"present", doc, []string{"fidelity"}, true},
		{"absent", doc, []string{"fidelity", "auto"}, false},
		{"end before begin", doc, []string{"live"}, false},
		{"no document", filepath.Join(dir, "none.md"), []string{"fidelity"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkSections(tc.path, tc.sections...); (err == nil) != tc.ok {
				t.Errorf("checkSections(%v) = %v; want ok %v", tc.sections, err, tc.ok)
			}
		})
	}
	// What it accepts, writeSections writes.
	if err := writeSections(doc, []section{newSection("fidelity", "new\n")}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# x\n<!-- fidelity:begin -->\nnew\n<!-- fidelity:end -->\n<!-- live:end -->\n<!-- live:begin -->\n"; string(b) != want {
		t.Errorf("document = %q; want %q", b, want)
	}
}

// Every section a full run writes is in the repository's document.
func TestDocumentHasSections(t *testing.T) {
	if err := checkSections("../docs/benchmarks.md", sectionsOf(config{})...); err != nil {
		t.Error(err)
	}
}
