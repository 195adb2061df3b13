package kafka

import (
	"fmt"
	"io"
	"os"
)

// Limits on the files of connection settings, which are read whole. A
// path naming /dev/zero, a log or a disk image would otherwise be read
// into memory to its end, and a password sent to the broker.
const (
	MaxPasswordFile = 64 << 10 // a password, with room for a long token
	MaxConfigFile   = 1 << 20  // the config file of profiles
	MaxPEMFile      = 4 << 20  // a CA bundle, a client certificate or key
)

// FileTooLargeError is a settings file longer than its limit.
type FileTooLargeError struct {
	Path  string
	What  string // the kind of file, for the limit's reason: "password file"
	Limit int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the limit for a %s: is it the right file?", e.Path, sizeText(e.Limit), e.What)
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFileLimit reads the file at path whole, refusing one longer than
// limit bytes with a *FileTooLargeError (what names its kind). It reads
// through a LimitReader, never asking the size, so a device or a pipe
// that never ends (/dev/zero) costs at most limit+1 bytes.
func ReadFileLimit(what, path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, &FileTooLargeError{Path: path, What: what, Limit: limit}
	}
	return b, nil
}
