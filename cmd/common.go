package cmd

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/profile-dev/profile/model"
)

// readProfile reads and validates the profile at path.
func readProfile(path string) (*model.Profile, error) {
	p, err := model.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", path)
	}
	return p, err
}

// checkScope rejects a negative --pid or --tid (0 means all of them).
func checkScope(pid, tid int) error {
	if pid < 0 {
		return usagef("bad --pid %d: must not be negative", pid)
	}
	if tid < 0 {
		return usagef("bad --tid %d: must not be negative", tid)
	}
	return nil
}
