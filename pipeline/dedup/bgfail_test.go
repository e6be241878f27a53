package dedup

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestSpliceWriteFailsAfterItReturned: a spliced file whose writes fail
// once the worker has gone on (finished in the background: here staged
// onto /dev/full, whose writes fail with ENOSPC after the splice has
// written everything to its buffer) fails the run with the error a
// failed write of the splice itself gives ("dedup: partition KEY: FILE:
// dataset: write PATH: no space left on device"), and publishes nothing.
func TestSpliceWriteFailsAfterItReturned(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	data, in := t.TempDir(), t.TempDir()
	obs := genObs(7, 3000, 600)
	if _, err := run(t, data, nil, writeObs(t, in, obs)); err != nil {
		t.Fatal(err)
	}
	before, snap := readState(t, data), datasettest.Snapshot(t, data)
	// The batch sights known hashes again: their partitions are spliced.
	again := make([]schema.Observation, 0, 200)
	for _, o := range obs[:200] {
		o.ObservedAt += 3_600_000
		again = append(again, o)
	}
	failKey := fmt.Sprintf("%02x", again[0].InfoHash[0])
	var (
		mu   sync.Mutex
		want string
	)
	writeStagedWrap = func(tx *dataset.Tx, table, key, name string, rows int64, write func(io.Writer) error,
		wrap func(error) error) (dataset.FileInfo, error) {
		if key == failKey {
			p, err := tx.StagePath(table, key, name)
			if err != nil {
				return dataset.FileInfo{}, err
			}
			if err := os.Symlink("/dev/full", p); err != nil {
				return dataset.FileInfo{}, err
			}
			mu.Lock()
			want = wrap(fmt.Errorf("dataset: %w", &os.PathError{Op: "write", Path: p, Err: syscall.ENOSPC})).Error()
			mu.Unlock()
		}
		return dataset.WriteStagedWrap(tx, table, key, name, rows, write, wrap)
	}
	t.Cleanup(func() { writeStagedWrap = dataset.WriteStagedWrap })
	_, err := run(t, data, nil, writeObs(t, in, again))
	mu.Lock()
	defer mu.Unlock()
	if want == "" {
		t.Fatalf("partition %s was not spliced (run: %v)", failKey, err)
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("run: %v; want %q", err, want)
	}
	if now := datasettest.Snapshot(t, data); now != snap {
		t.Fatalf("snapshot %d published (was %d)", now, snap)
	}
	compare(t, readState(t, data), before)
}
