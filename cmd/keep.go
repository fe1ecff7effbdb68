package cmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/profile-dev/profile/model"
)

// A recording cannot be made again: when its output cannot be written (a
// full disk, an I/O error, a quota, the directory gone), the profile is
// kept in a new file of os.TempDir() ($TMPDIR or /tmp) and the user told
// where, in one line.

// keptError says that a profile could not be written where asked, and
// where it was kept instead, or why it could not be kept either.
type keptError struct {
	err     error  // why the output could not be written: "write p.data: ..."
	kept    string // the file it is kept in; "" when it could not be kept
	tried   string // where keeping it was tried, when it failed
	keepErr error  // why it could not be kept
}

func (e *keptError) Error() string {
	if e.kept != "" {
		return fmt.Sprintf("%v; kept the profile at %s instead", e.err, e.kept)
	}
	return fmt.Sprintf("%v; keeping it in %s failed too: %v: the profile is lost", e.err, e.tried, e.keepErr)
}

func (e *keptError) Unwrap() error { return e.err }

// saveOrKeep writes p to out as writeDest does and, when that fails for
// any reason, keeps it aside: over prev, the file an earlier save of the
// session was kept in, or else in a new file named after out. It returns
// where p went: out, the file it is kept in (with a *keptError), or ""
// (with a *keptError saying why) when it could be written nowhere.
func saveOrKeep(stdout io.Writer, out string, keepOld bool, prev string, p *model.Profile) (string, error) {
	write := profileWriter(p)
	err := writeDest(stdout, out, keepOld, write)
	if err == nil {
		return out, nil
	}
	if prev != "" && writeOutput(prev, false, write) == nil {
		return prev, &keptError{err: err, kept: prev}
	}
	kept, kerr := keepAside(out, write)
	if kerr != nil {
		return "", &keptError{err: err, tried: kept, keepErr: kerr}
	}
	return kept, &keptError{err: err, kept: kept}
}

// keepAside writes what write produces to a new file in os.TempDir()
// named after out, and returns its path (or the directory, when no file
// could be made there). The file is 0600: the temporary directory is
// shared, and a profile holds the command line.
func keepAside(out string, write func(io.Writer) error) (string, error) {
	dir := os.TempDir()
	f, err := os.CreateTemp(dir, keptPattern(out))
	if err != nil {
		return dir, bare(err)
	}
	bw := bufio.NewWriterSize(plainWriter{f}, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return f.Name(), bare(err)
	}
	return f.Name(), nil
}

// keptPattern is os.CreateTemp's pattern for a profile that could not be
// written at out: its base name with the random part before the
// extension ("run.data" gives run.123456.data, "run.data.2" run.data.123456.2),
// so that the name says what it is and never replaces a file.
func keptPattern(out string) string {
	base := filepath.Base(out)
	if out == stdoutPath || base == "/" || base == "." {
		base = "profile.data"
	}
	ext := filepath.Ext(base)
	if ext == "" || ext == base {
		return base + ".*"
	}
	return strings.TrimSuffix(base, ext) + ".*" + ext
}
