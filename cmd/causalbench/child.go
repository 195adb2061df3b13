package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// causalbench starts itself as its own child programs, told apart by
// environment variables:
//
//   - measureEnv: the measuring wrapper. Every scenario runs under it,
//     because a child started straight from the harness would carry the
//     harness's peak RSS (the in-process broker holds the whole topic):
//     Go starts children with vfork, and Linux counts the memory of the
//     process that exec replaced into the child's maximum. The wrapper is
//     small, so what it adds is a few MiB (docs/performance.md gives the
//     figure).
//   - childEnv=floor: the plain consumer (floor.go);
//   - childEnv=none: nothing, to measure what a child starts from.
const (
	measureEnv = "CAUSALBENCH_MEASURE"
	childEnv   = "CAUSALBENCH_CHILD"
)

// runChild runs the child program the environment asks for and reports
// whether it did, with its exit code.
func runChild(args []string) (bool, int) {
	switch {
	case os.Getenv(measureEnv) != "":
		return true, measureMain(args)
	case os.Getenv(childEnv) == "floor":
		if err := floorMain(args, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "causalbench floor:", err)
			return true, 1
		}
		return true, 0
	case os.Getenv(childEnv) == "none":
		return true, 0 // the baseline: a child that does nothing
	}
	return false, 0
}

// usage is what the wrapper reports on file descriptor 3.
type usage struct {
	Wall, User, System time.Duration
	MaxRSSKiB          int64
}

// measureMain runs args with the wrapper's standard streams, then writes
// its usage as JSON to file descriptor 3 and exits with its exit code.
func measureMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "causalbench measure: no command")
		return 2
	}
	report := os.NewFile(3, "usage")
	c := exec.Command(args[0], args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, measureEnv+"=") })
	start := time.Now()
	err := c.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "causalbench measure:", err)
		return 1
	}
	u := usage{Wall: wall, User: c.ProcessState.UserTime(), System: c.ProcessState.SystemTime()}
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		u.MaxRSSKiB = ru.Maxrss // KiB on Linux
	}
	if err := json.NewEncoder(report).Encode(u); err != nil {
		fmt.Fprintln(os.Stderr, "causalbench measure: reporting:", err)
		return 1
	}
	return c.ProcessState.ExitCode()
}
