package dataset

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// stateRows returns n state rows of partition p (first byte p), from
// hash number from on.
func stateRows(p byte, from, n int) []schema.State {
	rows := make([]schema.State, n)
	for i := range rows {
		rows[i] = schema.State{InfoHash: schema.Hash{p, byte(from + i)}, HashType: 1, MetadataStatus: "new", Tier: "hot"}
	}
	return rows
}

// stageFilter stages a Bloom filter file of partition key that the
// manifest says holds keys keys (the bytes do not matter to a commit).
func stageFilter(t *testing.T, tx *Tx, key string, keys int64) {
	t.Helper()
	f, err := WriteStagedWith(tx, TableState, key, NewName(".bloom"), keys, func(w io.Writer) error {
		_, err := w.Write([]byte("filter"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Capacity = 4096
	tx.SetBloom(TableState, key, f)
}

// stageState stages rows as a file of partition key named name (a new
// part-….parquet if empty).
func stageState(t *testing.T, tx *Tx, key, name string, rows []schema.State) FileInfo {
	t.Helper()
	if name == "" {
		name = NewName(".parquet")
	}
	f, err := WriteStagedAs(tx, TableState, key, name, rows)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCommitRefusesAStaleBloomFilter: a commit whose state partition has
// more rows, hot and cold, than its Bloom filter counts keys publishes
// nothing, and says which partition and both counts; a partition
// rewritten with no new rows keeps its filter, and one given new rows
// commits with a filter that counts them or with none.
func TestCommitRefusesAStaleBloomFilter(t *testing.T) {
	const key = "5a"
	for _, tt := range []struct {
		name  string
		write func(t *testing.T, tx *Tx, old FileInfo)
		want  string // in the error (F: the base's filter), "" if the commit succeeds
		bloom int64  // the committed filter's keys (-1: none)
	}{
		{"a hash added, the filter carried", func(t *testing.T, tx *Tx, old FileInfo) {
			tx.SetPartition(TableState, key, []FileInfo{old, stageState(t, tx, key, "", stateRows(0x5a, 2, 1))})
		}, "Bloom filter F counts 2 keys, fewer than the partition's 3 rows (a writer added hashes without rebuilding or dropping the filter)", 0},
		{"a cold file added, the filter carried", func(t *testing.T, tx *Tx, old FileInfo) {
			cold := stageState(t, tx, key, "cold-"+NewName(".parquet"), stateRows(0x5a, 2, 2))
			tx.SetPartition(TableState, key, []FileInfo{old, cold})
		}, "counts 2 keys, fewer than the partition's 4 rows", 0},
		{"a new filter counting too few", func(t *testing.T, tx *Tx, old FileInfo) {
			tx.SetPartition(TableState, key, []FileInfo{stageState(t, tx, key, "", stateRows(0x5a, 0, 3))})
			stageFilter(t, tx, key, 2)
		}, "counts 2 keys, fewer than the partition's 3 rows", 0},
		{"a new filter counting no keys", func(t *testing.T, tx *Tx, old FileInfo) {
			tx.SetPartition(TableState, key, []FileInfo{old})
			stageFilter(t, tx, key, 0)
		}, "counts 0 keys, fewer than the partition's 2 rows", 0},
		{"rewritten without new rows, the filter carried", func(t *testing.T, tx *Tx, old FileInfo) {
			hot := stateRows(0x5a, 0, 1)
			cold := stateRows(0x5a, 1, 1)
			cold[0].Tier = schema.TierCold
			tx.SetPartition(TableState, key, []FileInfo{stageState(t, tx, key, "", hot), stageState(t, tx, key, "cold-"+NewName(".parquet"), cold)})
		}, "", 2},
		{"a hash added, a filter counting it", func(t *testing.T, tx *Tx, old FileInfo) {
			tx.SetPartition(TableState, key, []FileInfo{old, stageState(t, tx, key, "", stateRows(0x5a, 2, 1))})
			stageFilter(t, tx, key, 3)
		}, "", 3},
		{"a hash added, the filter dropped", func(t *testing.T, tx *Tx, old FileInfo) {
			tx.SetPartition(TableState, key, []FileInfo{old, stageState(t, tx, key, "", stateRows(0x5a, 2, 1))})
			tx.DropBloom(TableState, key)
		}, "", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			old := stageState(t, tx, key, "", stateRows(0x5a, 0, 2))
			tx.SetPartition(TableState, key, []FileInfo{old})
			stageFilter(t, tx, key, 2)
			base, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
			if err != nil {
				t.Fatal(err)
			}
			filter := base.Tables[TableState].Blooms[key]

			tx, err = d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			tt.write(t, tx, old)
			m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				f, ok := m.Tables[TableState].Blooms[key]
				if got := map[bool]int64{true: f.Rows, false: -1}[ok]; got != tt.bloom {
					t.Fatalf("committed filter counts %d keys, want %d (-1: none)", got, tt.bloom)
				}
				return
			}
			if err == nil {
				t.Fatal("committed")
			}
			got := strings.ReplaceAll(err.Error(), d.Dir, "D")
			if want := strings.ReplaceAll(tt.want, "F", filter.Name); !strings.Contains(got, want) {
				t.Fatalf("error %q\nwant one with %q", got, want)
			}
			if !strings.HasPrefix(got, "dataset: D: publishing snapshot 2: table state: partition 5a: Bloom filter ") {
				t.Fatalf("error %q does not say where", got)
			}
			if c := exitcode.Of(err); c != exitcode.Error {
				t.Fatalf("exit status %d, want %d", c, exitcode.Error)
			}
			if _, err := os.Stat(filepath.Join(d.Dir, "manifests", manifestName(2))); !os.IsNotExist(err) {
				t.Fatalf("snapshot 2's manifest: %v (want none)", err)
			}
			if cur, err := d.Current(); err != nil || cur.Snapshot != 1 {
				t.Fatalf("current snapshot %v, %v: want 1", cur, err)
			}
		})
	}
}

// TestCommitDropsAnUncountedCarriedFilter: a filter carried over from
// the base whose entry counts no keys (none of this build's writers
// records one; its count is unknown) goes once its partition has rows,
// rather than be trusted or fail the commit; on a partition without
// rows it stays.
func TestCommitDropsAnUncountedCarriedFilter(t *testing.T) {
	d := openNew(t)
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	empty := stageState(t, tx, "00", "", nil)
	tx.SetPartition(TableState, "00", []FileInfo{empty})
	stageFilter(t, tx, "00", 0)
	m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Tables[TableState].Blooms["00"]; !ok {
		t.Fatal("the uncounted filter of a partition without rows was dropped")
	}
	tx, err = d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableState, "00", []FileInfo{empty, stageState(t, tx, "00", "", stateRows(0, 0, 2))})
	m, err = tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := m.Tables[TableState].Blooms["00"]; ok {
		t.Fatalf("the uncounted filter %s was carried over a partition of %d rows", f.Name, m.Tables[TableState].Rows())
	}
}
