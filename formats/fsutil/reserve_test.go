package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReserveThenCommitKeepsTheBytes: Reserve allocates the temporary
// file ahead of its writes (its size grows), never shrinks it, and
// Commit publishes exactly the bytes written.
func TestReserveThenCommitKeepsTheBytes(t *testing.T) {
	for _, c := range []struct {
		name    string
		write   int
		reserve []int64
	}{
		{"nothing written", 0, []int64{1 << 20}},
		{"less than reserved", 100_000, []int64{64 << 10, 1 << 20, 512 << 10}},
		{"more than reserved", 300_000, []int64{4096}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.parquet")
			f, err := CreateOutput(path)
			if err != nil {
				t.Fatal(err)
			}
			want := bytes.Repeat([]byte("0123456789abcdef"), c.write/16)
			var most int64
			for i, n := range c.reserve {
				if err := f.Reserve(n); err != nil {
					t.Fatal(err)
				}
				most = max(most, n)
				if _, err := f.Write(want[len(want)*i/len(c.reserve) : len(want)*(i+1)/len(c.reserve)]); err != nil {
					t.Fatal(err)
				}
				fi, err := f.Stat()
				if err != nil {
					t.Fatal(err)
				}
				if wrote := int64(len(want) * (i + 1) / len(c.reserve)); f.Reserved() != most || fi.Size() != max(most, wrote) {
					t.Fatalf("after Reserve(%d): reserved %d, size %d; want %d and %d", n, f.Reserved(), fi.Size(), most, max(most, wrote))
				}
			}
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("published %d bytes (%v), want the %d written", len(got), err, len(want))
			}
		})
	}
}

// TestIsNoSpace: a full disk, a full quota and a file size limit are
// "no room"; other errors are not.
func TestIsNoSpace(t *testing.T) {
	for err, want := range map[error]bool{
		fmt.Errorf("x: %w", unix.ENOSPC): true,
		&os.PathError{Err: unix.EDQUOT}:  true,
		unix.EFBIG:                       true,
		unix.EIO:                         false,
		errors.New("no space"):           false,
	} {
		if IsNoSpace(err) != want {
			t.Errorf("IsNoSpace(%v) = %v", err, !want)
		}
	}
}
