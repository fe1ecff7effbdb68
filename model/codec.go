package model

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

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

// Write encodes p as a gzip-compressed profile.
func Write(w io.Writer, p *Profile) error {
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

// Read decodes a profile and validates it.
func Read(r io.Reader) (*Profile, error) {
	zr, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrTruncated
		}
		return nil, fmt.Errorf("%w (no gzip header)", ErrNotProfile)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrTruncated
		}
		return nil, fmt.Errorf("%w: corrupt compressed data: %w", ErrNotProfile, err)
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
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
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
