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
