package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestBackgroundWriteFailsTheCommit: a staged file whose last writes fail
// after WriteStagedWrap returned (finished in the background: here a
// file staged onto /dev/full, whose writes fail with ENOSPC) fails
// WaitStaged and Commit with the error the caller would have had from
// WriteStagedWrap, wrapped as the caller wraps it, and nothing is
// published; staged in the foreground, the same write fails
// WriteStagedWrap itself with the same text.
func TestBackgroundWriteFailsTheCommit(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	for _, background := range []bool{true, false} {
		t.Run(fmt.Sprint("background=", background), func(t *testing.T) {
			d := openNew(t)
			before := d.mustCurrent(t).Snapshot
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if background {
				tx.FinishInBackground(1)
			}
			// A good file first, then a copy of it on /dev/full.
			good, err := WriteStaged(tx, TableLeases, "", []schema.Lease{{InfoHash: schema.Hash{1}, LeaseID: "L1"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.WaitStaged(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(tx.stagedFile(TableLeases, "", good.Name))
			if err != nil {
				t.Fatal(err)
			}
			const name = "part-full.parquet"
			p, err := tx.StagePath(TableLeases, "", name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/full", p); err != nil {
				t.Fatal(err)
			}
			wrap := func(err error) error { return fmt.Errorf("caller: %w", err) }
			fi, werr := WriteStagedWrap(tx, TableLeases, "", name, 1, func(w io.Writer) error {
				_, err := w.Write(data)
				return err
			}, wrap)
			want := "caller: dataset: write " + p + ": no space left on device"
			if !background {
				if werr == nil || wrap(werr).Error() != want || !errors.Is(werr, syscall.ENOSPC) {
					t.Fatalf("WriteStagedWrap: %v, want %q", werr, want)
				}
				tx.Abort()
				return
			}
			if werr != nil {
				t.Fatalf("WriteStagedWrap: %v; want the error later", werr)
			}
			if fi.Size != good.Size || fi.CRC32C != good.CRC32C || fi.FooterSize != good.FooterSize || fi.FooterCRC32C != good.FooterCRC32C {
				t.Fatalf("staged %+v, want the checksums of its copy %+v", fi, good)
			}
			tx.SetPartition(TableLeases, "", []FileInfo{good, fi})
			if err := tx.WaitStaged(); err == nil || err.Error() != want || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("WaitStaged: %v, want %q", err, want)
			}
			m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
			if m != nil || err == nil || err.Error() != want {
				t.Fatalf("Commit = %v, %v; want nothing committed and %q", m, err, want)
			}
			if now := d.mustCurrent(t).Snapshot; now != before {
				t.Fatalf("snapshot %d published (was %d)", now, before)
			}
		})
	}
}

func (d *Dataset) mustCurrent(t *testing.T) *Manifest {
	t.Helper()
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	return m
}
