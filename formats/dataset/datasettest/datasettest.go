// Package datasettest helps tests of the stages: it commits to a dataset
// while a stage reads it, and checks the files a stage wrote.
package datasettest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// CommitState commits a snapshot of the dataset at dir (made if missing)
// whose state partition of row's first byte holds row as well, as a writer
// with --keep keep does: with 1, the files of every older snapshot are
// collected. The partition's Bloom filter is dropped (it no longer covers
// the partition).
func CommitState(t testing.TB, dir string, row schema.State, keep int) {
	t.Helper()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("%02x", schema.Prefix(row.InfoHash))
	rows, err := dataset.ReadPartition[schema.State](d, tx.Base().Table(dataset.TableState), key)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := dataset.WriteStaged(tx, dataset.TableState, key, append(rows, row))
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableState, key, []dataset.FileInfo{fi})
	tx.DropBloom(dataset.TableState, key)
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Keep: keep, Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

// Commit opens the dataset at dir, lets edit stage what the snapshot
// changes in tx, and commits it (writer "test", default --keep).
func Commit(t testing.TB, dir string, edit func(tx *dataset.Tx)) {
	t.Helper()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	edit(tx)
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

// FlipLastByteOf flips the last byte of column col's chunk in the Parquet
// file at path: page data, which the page's CRC-32 covers.
func FlipLastByteOf(t testing.TB, path, col string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Metadata().RowGroups[0].Columns {
		if strings.Join(c.MetaData.PathInSchema, ".") == col {
			start := c.MetaData.DataPageOffset
			if c.MetaData.DictionaryPageOffset != 0 {
				start = c.MetaData.DictionaryPageOffset
			}
			b[start+c.MetaData.TotalCompressedSize-1] ^= 0xff
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s: no column %s", path, col)
}

// NotInUse fails the test if a Dataset of the folder dir is still open
// in this process or another (its shared flock, which Open and
// OpenReadOnly hold until Close): a stage must close every dataset it
// opens, or a failing first writer's clean-up keeps the folder for good.
func NotInUse(t testing.TB, dir string) {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("%s: still in use (a Dataset left open): flock: %v", dir, err)
	}
}

// Snapshot returns the number of the current snapshot of the dataset at
// dir, read as Current reads it (no migration, no lock; a folder that is
// not a dataset fails the test rather than becoming one).
func Snapshot(t testing.TB, dir string) int64 {
	t.Helper()
	return Current(t, dir).Snapshot
}

// Current returns the current snapshot's manifest of the dataset at dir,
// read as a reader reads it (no migration, no lock).
func Current(t testing.TB, dir string) *dataset.Manifest {
	t.Helper()
	d, m := OpenCurrent(t, dir)
	d.Close()
	return m
}

// OpenCurrent opens the dataset at dir as Current does and returns it,
// still open, with its current snapshot's manifest: for a test that reads
// the snapshot's files or hands the dataset to a stage's internals. Close
// the Dataset when done.
func OpenCurrent(t testing.TB, dir string) (*dataset.Dataset, *dataset.Manifest) {
	t.Helper()
	d, err := dataset.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Current()
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	return d, m
}

// Files returns the paths of the files of partition key of table ("" for
// an unpartitioned table) in the current snapshot of the dataset at dir,
// in the manifest's order.
func Files(t testing.TB, dir, table, key string) []string {
	t.Helper()
	d, m := OpenCurrent(t, dir)
	defer d.Close()
	tb := m.Table(table)
	var paths []string
	for _, f := range tb.Partitions[key] {
		paths = append(paths, d.FilePath(tb, key, f))
	}
	return paths
}

// StateFile is one state file for CommitStateFiles: its rows (sorted by
// info_hash there) and its name ("" for a hot file's usual name; a cold
// file's comes from schedule.ColdFileName).
type StateFile struct {
	Name string
	Rows []schema.State
}

// HotFiles lays states out as one hot file per partition.
func HotFiles(states []schema.State) map[string][]StateFile {
	parts := map[string][]StateFile{}
	for _, st := range states {
		key := fmt.Sprintf("%02x", schema.Prefix(st.InfoHash))
		if parts[key] == nil {
			parts[key] = []StateFile{{}}
		}
		parts[key][0].Rows = append(parts[key][0].Rows, st)
	}
	return parts
}

// CommitStateFiles commits a snapshot of the dataset at dir (made if
// missing) whose state partitions are parts: per partition key, its
// files in order, an empty one left out. It sorts each file's rows.
func CommitStateFiles(t testing.TB, dir string, parts map[string][]StateFile) {
	t.Helper()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for key, files := range parts {
		var fis []dataset.FileInfo
		for _, f := range files {
			if len(f.Rows) == 0 {
				continue
			}
			slices.SortFunc(f.Rows, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
			name := f.Name
			if name == "" {
				name = dataset.NewName(".parquet")
			}
			fi, err := dataset.WriteStagedAs(tx, dataset.TableState, key, name, f.Rows)
			if err != nil {
				t.Fatal(err)
			}
			fis = append(fis, fi)
		}
		tx.SetPartition(dataset.TableState, key, fis)
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}
