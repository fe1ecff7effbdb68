package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/model"
)

// Output files are checked before any work starts, so that a long trace is
// never lost at the end for want of a place to put it, and written to a
// temporary file beside the destination, then renamed over it: a reader
// never sees half a file and a failed write leaves the previous one intact.
// Errors name the user's path, never the temporary one.

// checkOutput reports, in one line naming path, why a file could not be
// written at path. "Writable" is for this user (root may write a 0444 file).
func checkOutput(path string) error {
	if path == "" {
		return &usageError{errors.New("-o: empty file name")}
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		if fi.IsDir() {
			return fmt.Errorf("-o %s: is a directory", path)
		}
		if !fi.Mode().IsRegular() {
			// A device or fifo would be replaced by the rename, not written.
			return fmt.Errorf("-o %s: not a regular file", path)
		}
		if err := unix.Access(path, unix.W_OK); err != nil {
			// Moving a read-only file aside would defeat its protection.
			return fmt.Errorf("-o %s: cannot write the file: %w", path, err)
		}
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR):
		// Nothing there yet; the directory decides.
	default:
		return fmt.Errorf("-o %s: %w", path, bare(err))
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("-o %s: directory %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("-o %s: directory %s: %w", path, dir, bare(err))
	case !di.IsDir():
		return fmt.Errorf("-o %s: %s is not a directory", path, dir)
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("-o %s: cannot write in directory %s: %w", path, dir, err)
	}
	return nil
}

// writeProfile writes p to path, keeping an existing file as path.old.
func writeProfile(path string, p *model.Profile) error {
	return writeOutput(path, true, profileWriter(p))
}

func profileWriter(p *model.Profile) func(io.Writer) error {
	return func(w io.Writer) error { return model.Write(w, p) }
}

// writeOutput writes what write produces to path through a temporary file
// in path's directory; keepOld first renames an existing file to path.old.
// The checks are made again: things may have changed during a long trace.
func writeOutput(path string, keepOld bool, write func(io.Writer) error) error {
	if err := checkOutput(path); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err))
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, bare(err))
	}
	// CreateTemp makes the file 0600; give it what os.Create would.
	if err := f.Chmod(filePerm()); err != nil {
		return fail(err)
	}
	bw := bufio.NewWriterSize(plainWriter{f}, 1<<20)
	if err := write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	old := ""
	if keepOld {
		// checkOutput has made sure an existing path is a writable regular file.
		if _, err := os.Lstat(path); err == nil {
			old = path + ".old"
			if err := os.Rename(path, old); err != nil {
				os.Remove(tmp)
				return fmt.Errorf("keep previous %s as %s: %w", path, old, bare(err))
			}
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		if old != "" {
			os.Rename(old, path) // put the previous file back
		}
		return fmt.Errorf("write %s: %w", path, bare(err))
	}
	return nil
}

// plainWriter reports write errors without the temporary file's name.
type plainWriter struct{ f *os.File }

func (w plainWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	return n, bare(err)
}

// bare strips the file name from an os error (the temporary file's, or a
// name the caller already gives), leaving e.g. "permission denied".
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// filePerm is the mode os.Create gives a new file: 0666 less the umask.
// The umask is read from /proc: setting it to read it would race with
// other threads creating files. Without /proc, 0600 errs on the safe side.
var filePerm = sync.OnceValue(func() fs.FileMode {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o600
	}
	for line := range bytes.Lines(status) {
		if v, ok := bytes.CutPrefix(line, []byte("Umask:")); ok {
			mask, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32)
			if err != nil {
				break
			}
			return 0o666 &^ fs.FileMode(mask)
		}
	}
	return 0o600
})

// outputPath is where a rendering or export of input goes: out, or input
// with its extension replaced by ext when out is empty, "-" for standard
// output. A file is checked now, before any work starts.
func outputPath(input, out, ext string) (string, error) {
	if out == "" {
		out = renderedName(input, ext)
	}
	if out == "-" {
		return out, nil
	}
	return out, checkOutput(out)
}

// emit writes what write produces to out, or to standard output for "-",
// and says where it went. An existing file is replaced, not kept as .old:
// a rendering or an export is made again at will.
func emit(c *cobra.Command, out string, write func(io.Writer) error) error {
	if out == "-" {
		w := bufio.NewWriter(c.OutOrStdout())
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := writeOutput(out, false, write); err != nil {
		return err
	}
	fmt.Fprintf(c.ErrOrStderr(), "profile: wrote %s\n", out)
	return nil
}

// emitBytes is emit of data already made (a drawing).
func emitBytes(c *cobra.Command, out string, data []byte) error {
	return emit(c, out, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
