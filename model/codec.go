package model

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/profile-dev/profile/model/pb"
)

// FormatVersion is the version of the file format this package writes and
// the newest it reads.
const FormatVersion = 1

// magic opens every decompressed profile.
var magic = []byte("PROFILE\x00")

// ErrNotProfile means the data is not a profile file at all.
var ErrNotProfile = errors.New("not a profile file")

// ErrTruncated means the file ends early.
var ErrTruncated = errors.New("file is truncated")

// VersionError reports a format version this build cannot read.
type VersionError struct{ Version uint32 }

func (e *VersionError) Error() string {
	return fmt.Sprintf("format version %d is not supported (this build reads version %d; upgrade profile)", e.Version, FormatVersion)
}

// Write encodes p as a gzip-compressed profile, after the checks Read
// makes, so that Read accepts whatever Write wrote: what a timing
// measurement broke is repaired (Repair), each repair a warning
// "repaired at write: ..." in the written Meta; a profile breaking a
// structural invariant is refused, nothing written. p itself is not
// changed: snapshots share their nodes with a running session, so the
// repairs go to copies.
func Write(w io.Writer, p *Profile) error {
	q := *p
	q.Threads = slices.Clone(p.Threads)
	q.Meta.Warnings = slices.Clip(p.Meta.Warnings)
	if err := q.settle("repaired at write: "); err != nil {
		return fmt.Errorf("profile not written: %w", err)
	}
	return writeUnchecked(w, &q)
}

// settle makes a profile fit to hand on, as Read and Write both do: the
// structural checks, Repair (each line a warning, after prefix), then the
// checks Repair serves, which only a damaged composite can still fail.
func (p *Profile) settle(prefix string) error {
	if err := p.validateStructure(); err != nil {
		return err
	}
	for _, line := range p.repair() {
		p.Meta.Warnings = append(p.Meta.Warnings, prefix+line)
	}
	return p.validateMeasurements()
}

// writeUnchecked encodes p as it is.
func writeUnchecked(w io.Writer, p *Profile) error {
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(encode(p))
	if err != nil {
		return fmt.Errorf("encode profile: %w", err)
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	var hdr [12]byte
	copy(hdr[:], magic)
	binary.LittleEndian.PutUint32(hdr[8:], FormatVersion)
	if _, err := zw.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	return zw.Close()
}

// Read decodes a profile, repairs what a timing measurement broke (a file
// written before Write repaired: each repair a warning "repaired on read:
// ..." in Meta) and validates it.
func Read(r io.Reader) (*Profile, error) {
	data, err := unzip(r)
	if err != nil {
		return nil, err
	}
	if len(data) < len(magic)+4 {
		if bytes.HasPrefix(magic, data) || bytes.HasPrefix(data, magic) {
			return nil, ErrTruncated
		}
		return nil, fmt.Errorf("%w (bad magic)", ErrNotProfile)
	}
	if !bytes.Equal(data[:len(magic)], magic) {
		return nil, fmt.Errorf("%w (bad magic)", ErrNotProfile)
	}
	if v := binary.LittleEndian.Uint32(data[len(magic):]); v != FormatVersion {
		return nil, &VersionError{Version: v}
	}
	var f pb.ProfileFile
	if err := proto.Unmarshal(data[len(magic)+4:], &f); err != nil {
		return nil, fmt.Errorf("corrupt profile data: %w", err)
	}
	p, err := decode(&f)
	if err != nil {
		return nil, fmt.Errorf("corrupt profile data: %w", err)
	}
	if err := p.settle("repaired on read: "); err != nil {
		return nil, err
	}
	return p, nil
}

// gzipMagic opens every gzip stream, so every profile file.
var gzipMagic = []byte{0x1f, 0x8b}

// unzip decompresses a profile file. A file not opening with gzip's magic
// is not a profile, however short (an empty file, a line of text): only
// one that opens like a profile and ends early is truncated.
func unzip(r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	switch {
	case len(head) == 0:
		return nil, fmt.Errorf("%w (empty file)", ErrNotProfile)
	case !bytes.HasPrefix(gzipMagic, head):
		return nil, fmt.Errorf("%w (no gzip header)", ErrNotProfile)
	case len(head) < len(gzipMagic):
		return nil, ErrTruncated
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, gzipError(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, gzipError(err)
	}
	return data, nil
}

// gzipError tells a file that ends early from one that is not a
// profile; any other error is the reader's (I/O), passed on as it is.
func gzipError(err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return ErrTruncated
	case errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.As(err, &corrupt):
		return fmt.Errorf("%w: corrupt compressed data: %w", ErrNotProfile, err)
	}
	return err
}

// ReadFile reads the profile at path; errors name the file.
func ReadFile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// WriteFile writes p to path atomically: a reader never sees half a file.
func WriteFile(path string, p *Profile) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = Write(bw, p)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}
