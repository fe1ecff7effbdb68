package cmd

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/model"
	"github.com/profile-dev/profile/model/modeltest"
)

// checkOutputError checks an output error: one line naming path, never the
// temporary file.
func checkOutputError(t *testing.T, err error, path, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %q", path, want)
	case !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path):
		t.Errorf("%s: error %q, want it to name the path and contain %q", path, err, want)
	case strings.Contains(err.Error(), ".tmp") || strings.Contains(err.Error(), "\n"):
		t.Errorf("%s: error %q names the temporary file or has several lines", path, err)
	}
}

// noTemp fails if a temporary output file was left in dir.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.data")
	os.WriteFile(file, []byte("x"), 0o644)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(sub, link)
	for _, c := range []struct {
		name, path, want string
	}{
		{"new file", filepath.Join(dir, "new.data"), ""},
		{"existing file", file, ""},
		{"directory", sub, "-o " + sub + ": is a directory"},
		{"link to a directory", link, "is a directory"},
		{"missing directory", filepath.Join(dir, "no", "x.data"), "directory " + filepath.Join(dir, "no") + " does not exist"},
		{"parent is a file", filepath.Join(file, "x.data"), file + " is not a directory"},
		{"device", "/dev/null", ""},
		{"fifo", fifo, "-o " + fifo + ": not a regular file or a character device"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkOutput(c.path)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkOutputError(t, err, c.path, c.want)
		})
	}
	var ue *usageError
	if err := checkOutput(""); !errors.As(err, &ue) {
		t.Errorf("empty path: %v, want a usage error", err)
	}
}

func TestWriteOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.data")
	read := func(path string) string {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	// a new file: no .old, the mode os.Create gives
	if err := writeOutput(path, true, text("one")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != filePerm() {
		t.Fatalf("new file: %v %v, want mode %v", fi.Mode(), err, filePerm())
	}
	if _, err := os.Stat(path + ".old"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("new file made a .old: %v", err)
	}
	// an existing file becomes .old, an existing .old is replaced
	for _, s := range []string{"two", "three"} {
		prev := read(path)
		if err := writeOutput(path, true, text(s)); err != nil {
			t.Fatal(err)
		}
		if read(path) != s || read(path+".old") != prev {
			t.Fatalf("after writing %q: file %q, .old %q", s, read(path), read(path+".old"))
		}
	}
	// without keepOld the file is replaced and .old left alone
	if err := writeOutput(path, false, text("four")); err != nil {
		t.Fatal(err)
	}
	if read(path) != "four" || read(path+".old") != "two" {
		t.Fatalf("replace: file %q, .old %q", read(path), read(path+".old"))
	}
	// a failed write leaves everything as it was, and no temporary file
	err := writeOutput(path, true, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("encoder broke")
	})
	checkOutputError(t, err, path, "write "+path+": encoder broke")
	if read(path) != "four" || read(path+".old") != "two" {
		t.Fatalf("failed write: file %q, .old %q", read(path), read(path+".old"))
	}
	// a directory is refused and left untouched
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	checkOutputError(t, writeOutput(sub, true, text("x")), sub, "is a directory")
	if _, err := os.Stat(sub + ".old"); !errors.Is(err, os.ErrNotExist) {
		t.Error("the directory was moved aside")
	}
	missing := filepath.Join(dir, "none", "p.data")
	checkOutputError(t, writeOutput(missing, true, text("x")), missing, "does not exist")
	noTemp(t, dir)
}

// A character device is written straight: nothing renamed, no .old, no
// temporary file in /dev; its errors are the write's. "-" is standard
// output.
func TestWriteDevice(t *testing.T) {
	text := func(w io.Writer) error { _, err := io.WriteString(w, "profile"); return err }
	if err := writeOutput("/dev/null", true, text); err != nil {
		t.Errorf("/dev/null: %v", err)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v %v", fi.Mode(), err)
	}
	if _, err := os.Stat("/dev/null.old"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("/dev/null.old: %v", err)
	}
	noTemp(t, "/dev")
	checkOutputError(t, writeOutput("/dev/full", true, text), "/dev/full", "write /dev/full: no space left on device")
	var b strings.Builder
	if err := writeDest(&b, "-", true, text); err != nil || b.String() != "profile" {
		t.Errorf("-: %q, %v", b.String(), err)
	}
	if err := writeDest(failWriter{}, "-", true, text); err == nil || err.Error() != "write the standard output: input/output error" {
		t.Errorf("- failing: %v", err)
	}
}

// failWriter fails every write as a dead disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, unix.EIO }

// A session's first save keeps the previous file as .old; a later one (the
// final profile after a crash snapshot) replaces the snapshot, keeping the
// .old of the previous session.
func TestSaveSession(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "profile.data")
	os.WriteFile(path, []byte("previous session"), 0o644)
	f := traceFlags{out: path}
	snapshot, final := modeltest.Sample(), modeltest.Synthetic(100, 2, 1)
	for _, p := range []*model.Profile{snapshot, final} {
		if at, err := f.save(p); err != nil || at != path {
			t.Fatalf("saved at %q: %v", at, err)
		}
	}
	if old, _ := os.ReadFile(path + ".old"); string(old) != "previous session" {
		t.Errorf(".old = %q, want the previous session's file", old)
	}
	got, err := model.ReadFile(path)
	if err != nil || len(got.Threads) != len(final.Threads) {
		t.Errorf("final profile: %v", err)
	}
	noTemp(t, dir)
}

// Writability is this user's: as root, a 0444 file is writable, so the
// checks run on a thread that has given up root (or directly when not
// root).
func TestOutputPermissions(t *testing.T) {
	dir, err := os.MkdirTemp("", "profile-output-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	rw, ro := filepath.Join(dir, "rw"), filepath.Join(dir, "ro")
	os.Mkdir(rw, 0o777)
	os.Chmod(rw, 0o777)
	readOnly := filepath.Join(rw, "readonly.data")
	os.WriteFile(readOnly, []byte("keep me"), 0o444)
	os.Mkdir(ro, 0o755)
	inRO := filepath.Join(ro, "writable.data")
	os.WriteFile(inRO, []byte("x"), 0o666)
	os.Chmod(inRO, 0o666)
	os.Chmod(ro, 0o555)
	defer os.Chmod(ro, 0o755)

	asUnprivileged(t, func() {
		checkOutputError(t, checkOutput(readOnly), readOnly, "cannot write the file: permission denied")
		err := writeOutput(readOnly, true, profileWriter(modeltest.Sample()))
		checkOutputError(t, err, readOnly, "permission denied")
		if data, _ := os.ReadFile(readOnly); string(data) != "keep me" {
			t.Errorf("read-only file replaced")
		}
		if _, err := os.Stat(readOnly + ".old"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("read-only file moved aside")
		}
		for _, path := range []string{filepath.Join(ro, "new.data"), inRO} {
			checkOutputError(t, checkOutput(path), path, "cannot write in directory "+ro+": permission denied")
		}
		if err := checkOutput(filepath.Join(rw, "new.data")); err != nil {
			t.Error(err)
		}
	})
	noTemp(t, rw)
}

// asUnprivileged runs f as user nobody when the test runs as root. The
// credentials change on one locked thread only (a raw setresuid is per
// thread) which is never unlocked, so it ends with f.
func asUnprivileged(t *testing.T, f func()) {
	if os.Geteuid() != 0 {
		f()
		return
	}
	const nobody = 65534
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, nobody, nobody, 0); e != 0 {
			t.Errorf("setresgid: %v", e)
			return
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, nobody, nobody, 0); e != 0 {
			t.Errorf("setresuid: %v", e)
			return
		}
		f()
	}()
	<-done
}

// The end-to-end case from issue #8: -o naming a directory fails before
// any work and leaves the directory alone.
func TestMergeIntoDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeTemp(t, dir, "a.data", modeltest.Sample())
	writeTemp(t, dir, "b.data", modeltest.Sample())
	os.Mkdir("out", 0o755)
	os.WriteFile(filepath.Join("out", "keep"), []byte("x"), 0o644)
	_, stderr, code := runRoot("merge", "a.data", "b.data", "-o", "out")
	if code != 1 || stderr != "profile: -o out: is a directory\n" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	entries, _ := os.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "a.data b.data out" {
		t.Errorf("directory now holds %v", names)
	}
	if data, err := os.ReadFile(filepath.Join("out", "keep")); err != nil || string(data) != "x" {
		t.Errorf("out/keep: %q %v", data, err)
	}
}
