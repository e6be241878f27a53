package dedup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestHaltStopsChecksumming: a run that fails before it needs its inputs'
// checksums halts the goroutine computing them, which stops reading and
// ends before the run returns (it used to read on after the run, racing
// with what ran next: CI's race detector caught it reading a setting a
// test's cleanup restored).
func TestHaltStopsChecksumming(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small.txt"), filepath.Join(dir, "big.txt")
	if err := os.WriteFile(small, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 16 GiB to read, none of it on disk.
	if err := f.Truncate(16 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := checksumAll([]input{{name: small, path: small, kind: kindText}, {name: big, path: big, kind: kindText}})
	c.halt()
	select {
	case <-c.done:
	default:
		t.Fatal("halt returned before the checksum goroutine ended")
	}
	if !errors.Is(c.err, context.Canceled) || c.ids[1] != "" {
		t.Fatalf("after halt: err %v, ids %q; want the big file not summed (context canceled)", c.err, c.ids)
	}
}
