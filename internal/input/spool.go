package input

import (
	"fmt"
	"os"
	"runtime"
)

// SpoolFile is a temporary file that commands write once and read again,
// which no end of the process leaves behind where the system allows it:
// it is unlinked as soon as it is created (Unix: the open file stays
// readable, and a kill -9 leaves nothing), else (Windows, where an open
// file cannot be removed) Close removes it.
type SpoolFile struct {
	*os.File
	unlinked bool
}

// createSpool creates a spool in the temporary directory, its name made
// from pattern as os.CreateTemp does.
func createSpool(pattern string) (*SpoolFile, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	return &SpoolFile{File: f, unlinked: os.Remove(f.Name()) == nil}, nil
}

// Close closes the file, and removes it where it could not be unlinked
// when it was created.
func (s *SpoolFile) Close() error {
	err := s.File.Close()
	if !s.unlinked {
		os.Remove(s.Name())
	}
	return err
}

// reopenPath is a name that opens the spool again with an offset of its
// own, so that a new reading cannot disturb one still going: the file's
// own name while it has one, /proc/self/fd/N on Linux once it is
// unlinked, or "" where there is none (read it then through the open
// file, from its start).
func (s *SpoolFile) reopenPath() string {
	if !s.unlinked {
		return s.Name()
	}
	if runtime.GOOS != "linux" {
		return ""
	}
	p := fmt.Sprintf("/proc/self/fd/%d", s.Fd())
	if _, err := os.Stat(p); err != nil { // no /proc mounted
		return ""
	}
	return p
}
