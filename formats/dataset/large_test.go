package dataset

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/schema"
)

// bigRows is a partition's worth of state rows whose file is longer than
// fsutil.UncachedBuffer (random hashes do not compress), so that it is
// written with O_DIRECT where the file system takes it.
func bigRows(p byte, n int) []schema.State {
	rng := rand.New(rand.NewPCG(uint64(p), 7))
	rows := make([]schema.State, n)
	for i := range rows {
		rows[i].InfoHash[0] = p
		for j := 1; j < 20; j++ {
			rows[i].InfoHash[j] = byte(rng.Uint32())
		}
		rows[i].SeenCount = int64(i)
		rows[i].HashType, rows[i].MetadataStatus, rows[i].Tier = schema.HashV1, schema.StatusNew, schema.TierHot
	}
	// WriteStaged wants the partition's order.
	slices.SortFunc(rows, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
	return rows
}

func partKey(p byte) string { return fmt.Sprintf("%02x", p) }

// TestLargeStagedFilesCommitWhole stages files past fsutil.UncachedBuffer
// (O_DIRECT) and commits: every file is whole on disk, as its manifest
// entry says, and the glob reads every row. An aborted transaction leaves
// nothing behind.
func TestLargeStagedFilesCommitWhole(t *testing.T) {
	d := openNew(t)
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	const parts, rows = 3, 60_000
	for p := range byte(parts) {
		info, err := WriteStaged(tx, TableState, partKey(p), bigRows(p, rows))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size <= fsutil.UncachedBuffer {
			t.Fatalf("partition %02x: a %d-byte file is too small for this test", p, info.Size)
		}
		tx.SetPartition(TableState, partKey(p), []FileInfo{info})
	}
	m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Verify(context.Background(), d.Files(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Problems) != 0 || v.Files != parts+otherEmptyTables {
		t.Fatalf("%d files checked, problems: %v", v.Files, v.Problems)
	}
	if n := globRows(t, d); n != parts*rows {
		t.Fatalf("glob sees %d rows, want %d", n, parts*rows)
	}

	aborted, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for p := range byte(parts) {
		if _, err := WriteStaged(aborted, TableState, partKey(p), bigRows(p, rows)); err != nil {
			t.Fatal(err)
		}
	}
	aborted.Abort()
	left, _ := os.ReadDir(filepath.Join(d.Dir, "staging"))
	if len(left) != 0 {
		t.Fatalf("an aborted transaction left %d entries in staging/", len(left))
	}
}
