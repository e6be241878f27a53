// Package datasettest helps tests of the stages: it commits to a dataset
// while a stage reads it, and checks the files a stage wrote.
package datasettest

import (
	"context"
	"fmt"
	"testing"

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
