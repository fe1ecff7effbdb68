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

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/profile-dev/profile/model"
)

// Output files are checked before any work starts, so that a long trace is
// never lost at the end for want of a place to put it, and written to a
// temporary file beside the destination, then renamed over it: a reader
// never sees half a file and a failed write leaves the previous one intact.
// Errors name the user's path, never the temporary one. A character device
// (/dev/null) is written straight: there is nothing to rename over it. "-"
// is standard output, for the commands that take it.

// stdoutPath is the -o that names standard output.
const stdoutPath = "-"

// outName is how messages name an output.
func outName(path string) string {
	if path == stdoutPath {
		return "the standard output"
	}
	return path
}

// isDevice tells whether path is a character device (/dev/null, /dev/full).
func isDevice(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&fs.ModeCharDevice != 0
}

// isStream tells whether path is written straight, once, never replaced:
// standard output or a character device.
func isStream(path string) bool { return path == stdoutPath || isDevice(path) }

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
		if fi.Mode()&fs.ModeCharDevice != 0 {
			if err := unix.Access(path, unix.W_OK); err != nil {
				return fmt.Errorf("-o %s: cannot write the device: %w", path, err)
			}
			return nil // written straight: its directory does not matter
		}
		if !fi.Mode().IsRegular() {
			// A fifo would block the end of a trace until read; a socket
			// cannot be opened. -o - writes standard output.
			return fmt.Errorf("-o %s: not a regular file or a character device", path)
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
	if isDevice(path) {
		return writeDevice(path, write)
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

// writeDevice writes what write produces straight to the character device
// path: no temporary file, no rename, no .old, no sync (a device may not
// have one: /dev/null says EINVAL).
func writeDevice(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err))
	}
	bw := bufio.NewWriterSize(plainWriter{f}, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, bare(err))
	}
	return nil
}

// writeDest is writeOutput, or a write to stdout for "-".
func writeDest(stdout io.Writer, path string, keepOld bool, write func(io.Writer) error) error {
	if path != stdoutPath {
		return writeOutput(path, keepOld, write)
	}
	w := bufio.NewWriterSize(stdout, 1<<20)
	err := write(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("write the standard output: %w", bare(err))
	}
	return nil
}

// checkProfileOutput is checkOutput for the commands that write a profile
// (binary, gzip-compressed), where "-" is standard output: refused when
// that is a terminal, which would show garbage.
func checkProfileOutput(c *cobra.Command, path string) error {
	if path != stdoutPath {
		return checkOutput(path)
	}
	if f, ok := c.OutOrStdout().(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		return usagef("-o -: the standard output is a terminal, and a profile is binary: redirect it, or give -o FILE")
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
	if out == stdoutPath {
		return out, nil
	}
	return out, checkOutput(out)
}

// emit writes what write produces to out, or to standard output for "-",
// and says where it went. An existing file is replaced, not kept as .old:
// a rendering or an export is made again at will.
func emit(c *cobra.Command, out string, write func(io.Writer) error) error {
	if err := writeDest(c.OutOrStdout(), out, false, write); err != nil {
		return err
	}
	if out != stdoutPath {
		fmt.Fprintf(c.ErrOrStderr(), "profile: wrote %s\n", out)
	}
	return nil
}

// emitBytes is emit of data already made (a drawing).
func emitBytes(c *cobra.Command, out string, data []byte) error {
	return emit(c, out, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
