package cmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
	"github.com/profile-dev/profile/summary"
)

// runSub runs a subcommand and returns its stdout, stderr and error.
func runSub(c *cobra.Command, args ...string) (string, string, error) {
	var out, errb bytes.Buffer
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errb)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.Execute()
	return out.String(), errb.String(), err
}

func sampleFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profile.data")
	if err := model.WriteFile(path, modeltest.Sample()); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSummaryCmd(t *testing.T) {
	path := sampleFile(t)
	r, err := summary.Compute(modeltest.Sample(), summary.Options{Top: 3, Tid: 101, Busy: true}) // busy: the command's default
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := summary.WriteJSON(&want, r); err != nil {
		t.Fatal(err)
	}
	out, _, err := runSub(newSummaryCmd(), path, "--format", "json", "--top", "3", "--tid", "101")
	if err != nil || out != want.String() {
		t.Fatalf("json: %v\n%s", err, out)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc["format"] != "profile-summary/1" {
		t.Fatalf("json output: %v", err)
	}
	for format, marker := range map[string]string{"table": "Hottest functions", "markdown": "## Hottest functions",
		"md": "## Totals", "csv": "section,key,value", "JSON": `"format"`} {
		out, _, err := runSub(newSummaryCmd(), path, "--format", format)
		if err != nil || !strings.Contains(out, marker) {
			t.Errorf("--format %s: %v\n%s", format, err, out)
		}
	}
	// the alias
	root := &cobra.Command{Use: "profile"}
	root.AddCommand(newSummaryCmd())
	if out, _, err := runSub(root, "summarize", path, "--format", "csv"); err != nil || !strings.HasPrefix(out, "section,") {
		t.Errorf("summarize alias: %v", err)
	}
}

// A profile with counted calls keeps them through its file: the summary
// shows their exact calls and no time.
func TestSummaryCmdCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counted.data")
	if err := model.WriteFile(path, modeltest.Counted()); err != nil {
		t.Fatal(err)
	}
	out, _, err := runSub(newSummaryCmd(), path, "--format", "csv")
	if err != nil || !strings.Contains(out, "\nfunctions,,,hash,app,,,,,,22,5,,,,,,,,,,,,,,,,,true\n") {
		t.Fatalf("csv: %v\n%s", err, out)
	}
	out, _, err = runSub(newSummaryCmd(), path)
	if err != nil || !strings.Contains(out, "2 functions only counted (--counted)") {
		t.Fatalf("table: %v\n%s", err, out)
	}
}

func TestSummaryCmdErrors(t *testing.T) {
	path := sampleFile(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{path, "--format", "xml"}, `unknown --format "xml"`},
		{[]string{path, "--top", "-2"}, "bad --top"},
		{[]string{path, "--tid", "999"}, "no thread 999"},
		{[]string{path, "--pid", "999"}, "no process 999"},
		{[]string{filepath.Join(t.TempDir(), "missing.data")}, "no such file"},
		{[]string{}, "accepts 1 arg"},
	} {
		_, _, err := runSub(newSummaryCmd(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.args, err, c.want)
		}
	}
}
