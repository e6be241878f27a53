package dataset

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
)

// TestTotals: a commit publishes its base's totals plus what its
// transaction added; an aborted transaction, and one that lost the race
// to another writer, publish nothing, and the loser re-applied on the
// new base adds to that base's totals.
func TestTotals(t *testing.T) {
	d := openNew(t)
	defer d.Close()
	ctx := context.Background()
	totals := func() map[string]int64 {
		t.Helper()
		m, err := d.Current()
		if err != nil {
			t.Fatal(err)
		}
		return m.Totals
	}
	commit := func(tx *Tx) error {
		tx.SetPartition(TableLeases, "", nil) // a change, so that there is something to commit
		_, err := tx.Commit(ctx, CommitOptions{Writer: "test"})
		return err
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tx.AddTotal("a", 5)
	tx.AddTotal("a", 2)
	tx.AddTotal("zero", 0) // never recorded
	tx.AddTotal(TotalKey("b", "x"), 1)
	if err := commit(tx); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"a": 7, "b:x": 1}
	if got := totals(); !maps.Equal(got, want) {
		t.Fatalf("after the first commit: %v, want %v", got, want)
	}

	// Aborted: nothing.
	tx, err = d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tx.AddTotal("a", 100)
	tx.Abort()
	if got := totals(); !maps.Equal(got, want) {
		t.Fatalf("after an abort: %v, want %v", got, want)
	}

	// Two writers from the same base: the second conflicts and publishes
	// nothing; begun again, it adds to the first one's totals.
	t1, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t2, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t1.AddTotal("a", 1)
	t2.AddTotal("a", 10)
	if err := commit(t1); err != nil {
		t.Fatal(err)
	}
	if err := commit(t2); !errors.Is(err, ErrConflict) {
		t.Fatalf("second writer: %v, want a conflict", err)
	}
	t2.Abort()
	want["a"] = 8
	if got := totals(); !maps.Equal(got, want) {
		t.Fatalf("after a lost race: %v, want %v", got, want)
	}
	t2, err = d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t2.AddTotal("a", 10)
	if err := commit(t2); err != nil {
		t.Fatal(err)
	}
	want["a"] = 18
	if got := totals(); !maps.Equal(got, want) {
		t.Fatalf("re-applied: %v, want %v", got, want)
	}
}

// TestTotalsDamage: a negative total, or one without a name, is damage
// (no build writes one).
func TestTotalsDamage(t *testing.T) {
	for _, tt := range []struct {
		name   string
		totals map[string]any
		want   string
	}{
		{"negative", map[string]any{"dedup_observations": -1}, `totals: "dedup_observations" is -1`},
		{"no name", map[string]any{"": 3}, "totals:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, path, _ := damagedDataset(t, func(m map[string]any) { m["totals"] = tt.totals })
			if _, err := readManifest(path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestMigrateFromV6: a format 6 dataset has no totals; opening it for
// writing migrates it to the current format, with no totals yet (the
// state's files rewritten for format 10's columns, keeping their rows).
func TestMigrateFromV6(t *testing.T) {
	dir, path, name := damagedDataset(t, func(m map[string]any) {
		m["format_version"] = 6
		delete(m, "totals")
	})
	before, err := readManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cur, _ := d.Current()
	if cur.FormatVersion != FormatVersion || cur.Snapshot != before.Snapshot+1 || len(cur.Totals) != 0 {
		t.Fatalf("after migrate: version %d snapshot %d totals %v", cur.FormatVersion, cur.Snapshot, cur.Totals)
	}
	if got, was := cur.Table(TableState).Partitions["00"], before.Table(TableState).Partitions["00"]; len(got) != 1 || got[0].Rows != was[0].Rows {
		t.Fatalf("state files after migrating: %+v, want %s's %d rows", got, name, was[0].Rows)
	}
}
