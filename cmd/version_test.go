package cmd

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	const sha = "1c65d267093fbb2bd97c28f9b9b10a80c67107ff"
	build := func(settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.1"}
		for i := 0; i < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, c := range []struct {
		name    string
		version string
		bi      *debug.BuildInfo
		text    string
	}{
		{"no build info", "1.0", nil, "profile  1.0\ngo       " + runtime.Version() + "\n"},
		{"not from git", "1.0", build("-buildmode", "exe"), "profile  1.0\ngo       go1.26.1\n"},
		{"clean checkout", "1.0", build("vcs", "git", "vcs.revision", sha, "vcs.modified", "false"),
			"profile  1.0\ngo       go1.26.1\ncommit   " + sha + "\n"},
		{"uncommitted changes", "1.0", build("vcs.revision", sha, "vcs.modified", "true"),
			"profile  1.0\ngo       go1.26.1\ncommit   " + sha + " (modified)\n"},
		// No commit stamped by Go (a git worktree, -buildvcs=false): the
		// Makefile's version, a git describe, names it.
		{"described, no tag", "1c65d26", build("-buildmode", "exe"),
			"profile  1c65d26\ngo       go1.26.1\ncommit   1c65d26\n"},
		{"described, modified", "1c65d26-dirty", nil,
			"profile  1c65d26-dirty\ngo       " + runtime.Version() + "\ncommit   1c65d26 (modified)\n"},
		{"described after a tag", "v1.2.0-rc1-14-g1c65d267-dirty", build(),
			"profile  v1.2.0-rc1-14-g1c65d267-dirty\ngo       go1.26.1\ncommit   1c65d267 (modified)\n"},
		{"stamped wins", "1c65d26-dirty", build("vcs.revision", sha, "vcs.modified", "false"),
			"profile  1c65d26-dirty\ngo       go1.26.1\ncommit   " + sha + "\n"},
		{"a tag names no commit", "v1.2.0", build(), "profile  v1.2.0\ngo       go1.26.1\n"},
		{"not a describe", "0.1.0-dev", build(), "profile  0.1.0-dev\ngo       go1.26.1\n"},
		{"short hex", "beef12", build(), "profile  beef12\ngo       go1.26.1\n"},
	} {
		var b bytes.Buffer
		if err := writeVersion(&b, buildVersion(c.version, c.bi)); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.text {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, b.String(), c.text)
		}
	}
}

func TestVersionCmd(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		// A test binary has no git information: see TestVersionOfBuild.
		{[]string{"version"}, 0, "profile  " + Version + "\ngo       " + runtime.Version() + "\n"},
		{[]string{"version", "--format", "json"}, 0, "{\n  \"version\": \"" + Version + "\",\n  \"go\": \"" + runtime.Version() + "\"\n}\n"},
		{[]string{"--version"}, 0, "profile version " + Version + "\n"},
		{[]string{"version", "--format", "xml"}, 2, ""},
		{[]string{"version", "now"}, 2, ""},
	} {
		stdout, stderr, code := runRoot(c.args...)
		if code != c.code || stdout != c.out {
			t.Errorf("%q: exit %d, stdout %q (stderr %q); want %d, %q", c.args, code, stdout, stderr, c.code, c.out)
		}
	}
}
