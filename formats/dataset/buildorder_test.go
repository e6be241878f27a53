package dataset

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestCommitBuildOrderIsFixed: a commit that fails on several damaged
// files it would carry over, in several tables and partitions, names the
// same one every time: tables are built in name order, and a table's
// partitions in key order, so it is the first damaged file of the first
// table by name (state's, not torrents'; partition 01's, not 02's).
func TestCommitBuildOrderIsFixed(t *testing.T) {
	d := openNew(t)
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	stage := func(tx *Tx, table, key string, h byte) {
		t.Helper()
		var info FileInfo
		var err error
		switch table {
		case TableState:
			info, err = WriteStaged(tx, table, key, []schema.State{{InfoHash: schema.Hash{h, 1}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
		case TableTorrents:
			info, err = WriteStaged(tx, table, key, []schema.Torrent{{InfoHash: schema.Hash{h, 1}, HashType: 1}})
		}
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(table, key, []FileInfo{info})
	}
	for _, p := range []struct {
		table, key string
		h          byte
	}{{TableState, "01", 0x01}, {TableState, "02", 0x02}, {TableTorrents, "01", 0x01}, {TableTorrents, "02", 0x02}} {
		stage(tx, p.table, p.key, p.h)
	}
	base, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, p := range []struct{ table, key string }{{TableTorrents, "02"}, {TableTorrents, "01"}, {TableState, "02"}, {TableState, "01"}} {
		tb := base.Table(p.table)
		path := d.FilePath(tb, p.key, tb.Partitions[p.key][0])
		if err := os.Truncate(path, 1); err != nil {
			t.Fatal(err)
		}
		want = path // the last: state's partition 01
	}
	const tries = 50 // two tables in map order agree 50 times once in 2^49
	for i := range tries {
		tx, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		stage(tx, TableTorrents, "00", 0x00)
		stage(tx, TableState, "00", 0x00)
		m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
		de, ok := errors.AsType[*DamagedFileError](err)
		if !ok || m != nil {
			t.Fatalf("commit %d of %v: %v, want a DamagedFileError", i, m, err)
		}
		if de.Path != want {
			t.Fatalf("commit %d: %v\nwant the error about %s", i, err, want)
		}
	}
}
