package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

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

// writeProfile writes p to path, keeping an existing file as path.old.
func writeProfile(path string, p *model.Profile) error {
	if _, err := os.Stat(path); err == nil {
		if err := os.Rename(path, path+".old"); err != nil {
			return fmt.Errorf("keep previous %s: %w", path, err)
		}
	}
	return model.WriteFile(path, p)
}
