package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestMovedTurnsACollectedBaseIntoAConflict: a file of a transaction's
// base found missing once later commits collected that snapshot is a
// conflict (the writer re-applies on the new snapshot); while the base is
// still current, a missing file stays the error it is (damage).
func TestMovedTurnsACollectedBaseIntoAConflict(t *testing.T) {
	d := openNew(t)
	commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	missing := fmt.Errorf("open state/v/…/part.parquet: %w", fs.ErrNotExist)
	if got := tx.Moved(missing); got != missing {
		t.Fatalf("base still current: Moved gave %v, want the error unchanged", got)
	}
	for i := range 4 { // the default --keep (3) collects the base
		commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, byte(2 + i)}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	}
	got := tx.Moved(missing)
	if !errors.Is(got, ErrConflict) || !errors.Is(got, fs.ErrNotExist) {
		t.Fatalf("base collected: Moved gave %v, want a conflict wrapping the missing file", got)
	}
	if retry, _ := Reapply(got, 0); !retry {
		t.Fatal("Reapply does not retry a collected base")
	}
	if other := errors.New("disk on fire"); tx.Moved(other) != other {
		t.Fatal("Moved changed an error that is no missing file")
	}
}
