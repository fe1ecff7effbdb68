package plancache

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
)

// ToolID names the build of the running profile: the Go build ID its
// linker wrote (it changes with any change to the code), so that plans
// made by another build, whose planning may differ, are never taken.
func ToolID() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("plan cache: %w", err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		return "", fmt.Errorf("plan cache: %w", err)
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return "", errors.New("plan cache: no Go build ID in " + exe)
	}
	id, err := s.Data()
	if err != nil || len(id) == 0 {
		return "", fmt.Errorf("plan cache: the Go build ID of %s: %w", exe, err)
	}
	return string(id), nil
}
