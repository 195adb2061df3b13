package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/testutil"
)

// TestSignalWhileOpening: Ctrl-C (SIGINT) or SIGTERM while the binary is
// blocked opening a FIFO nobody writes exits 130 at once, saying so.
func TestSignalWhileOpening(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "nobody.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(binary, "replay", "-f", fifo)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted") {
					t.Errorf("%v: %v, stderr %q; want exit 130 saying interrupted", sig, err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%v did not stop the command", sig)
			}
		})
	}
}

// TestFullDeviceAndBrokenPipe: stdout on /dev/full is exit 1 with the
// cause; a reader that goes away (head -1) ends the command silently.
func TestFullDeviceAndBrokenPipe(t *testing.T) {
	capturePath := testutil.Testdata("captures", "basic.ndjson")
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	cmd := exec.Command(binary, "decode", "-f", capturePath)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	err = cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("decode > /dev/full: %v, %q; want exit 1 and the cause", err, stderr.String())
	}

	// A large output into a pipe closed after the first line.
	big := filepath.Join(t.TempDir(), "big.ndjson")
	var b bytes.Buffer
	for i := range 50000 {
		fmt.Fprintf(&b, `{"topic_id":"01020304-0506-0708-090a-0b0c0d0e0f10","partition":0,"offset":%d,"headers":[{"key":"parsley.causes","value":"AQA="}]}`+"\n", i)
	}
	if err := os.WriteFile(big, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", `"$0" replay -f "$1" --interleave channel | head -1 >/dev/null`, binary, big)
	if out, err := sh.CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("replay | head -1: %v, stderr %q; want nothing said", err, out)
	}
}
