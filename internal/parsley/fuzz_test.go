package parsley

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// seedVectors adds every vector's bytes to the corpus.
func seedVectors(f *testing.F) {
	data, err := os.ReadFile(vectorsPath(f))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) >= 3 && !strings.HasPrefix(line, "#") {
			if b, err := hex.DecodeString(fields[2]); err == nil {
				f.Add(b)
			}
		}
	}
}

// FuzzHeldRecord is differential: whatever decodes encodes back to the same
// bytes (the encoding is unique), and the decoder never reads past or panics.
func FuzzHeldRecord(f *testing.F) {
	seedVectors(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := ParseHeldRecord(b)
		if err != nil {
			return
		}
		if back := AppendHeldRecord(nil, &rec); !bytes.Equal(back, b) {
			t.Fatalf("decode∘encode: %x became %x", b, back)
		}
		again, err := ParseHeldRecord(AppendHeldRecord(nil, &rec))
		if err != nil || describe(&again) != describe(&rec) {
			t.Fatalf("encode∘decode: %v %s / %s", err, describe(&again), describe(&rec))
		}
	})
}

// FuzzKey: an accepted key encodes back to its bytes.
func FuzzKey(f *testing.F) {
	seedVectors(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKey(b)
		if err != nil {
			return
		}
		if back := AppendKey(nil, k); !bytes.Equal(back, b) {
			t.Fatalf("key %x re-encoded as %x", b, back)
		}
	})
}
