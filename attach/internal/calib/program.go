package calib

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

//go:embed calib.bin
var program []byte

// Calls per batch of the calibration program, by probe kind: enough for a
// batch to outweigh its clock reads, few enough that the whole run stays
// short on a slow ptrace host (trap).
const (
	InlineCalls = 500
	TrapCalls   = 20
	Batches     = 16
)

// Write puts the calibration program in a file it can be run from: the
// temporary directory, or the user's cache directory where /tmp is
// mounted noexec. The caller removes it.
func Write() (string, error) {
	dirs := []string{os.TempDir()}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, d)
	}
	var last error
	for _, dir := range dirs {
		path, err := writeExecutable(dir, program)
		if err == nil {
			return path, nil
		}
		last = err
	}
	return "", fmt.Errorf("write the calibration program: %w", last)
}

func writeExecutable(dir string, code []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	removeStale(dir)
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s%d-*", prefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	path := f.Name()
	_, err = f.Write(code)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, 0o700)
	}
	if err == nil {
		err = runnable(path)
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// runnable checks that path can be executed: a noexec mount cannot.
func runnable(path string) error {
	if err := syscall.Access(path, 1); err != nil { // X_OK honours noexec mounts
		return fmt.Errorf("%s: %w", filepath.Dir(path), err)
	}
	return nil
}

// prefix begins the name of a calibration program's file; the writer's
// pid follows.
const prefix = "profile-calib-"

// removeStale removes the calibration programs in dir that a profiler
// killed while calibrating left: those whose writer is gone.
func removeStale(dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
	for _, p := range paths {
		if pid, ok := writer(filepath.Base(p)); ok && pid != os.Getpid() && unix.Kill(pid, 0) == unix.ESRCH {
			os.Remove(p)
		}
	}
}

// writer reads the writer's pid in a calibration program's file name
// (profile-calib-PID-RANDOM).
func writer(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}
