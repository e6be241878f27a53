package statecol_test

import (
	"errors"
	"os"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestRecordedFooterMismatch: every state reader checks the footer of
// the rowio.DataFile it is given against the checksum recorded in it: a
// flipped bit that renames a column is a *rowio.FooterError naming the
// file, before the footer is decoded (unrecorded, the same file is
// refused later, by the column check).
func TestRecordedFooterMismatch(t *testing.T) {
	path := writeStateFile(t, []schema.State{{InfoHash: schema.Hash{1}, HashType: 1, SeenCount: 3, MetadataStatus: "new", Tier: "hot"}})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := rowio.SumFooter(f, info.Size())
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	df := rowio.RecordedFile(path, sum)
	for _, r := range stateReaders {
		if err := r.read(df); err != nil {
			t.Fatalf("%s: the intact file: %v", r.name, err)
		}
	}
	datasettest.RenameInFooter(t, path, "seen_count", 0)
	for _, r := range stateReaders {
		err := r.read(df)
		if fe, ok := errors.AsType[*rowio.FooterError](err); !ok || fe.Path != path {
			t.Errorf("%s: %v, want a FooterError naming %s", r.name, err, path)
		}
		if err := r.read(rowio.UnrecordedFile(path)); err == nil {
			t.Errorf("%s: the damaged file, unrecorded: no error", r.name)
		} else if _, ok := errors.AsType[*rowio.FooterError](err); ok {
			t.Errorf("%s: the damaged file, unrecorded: %v, checked against a sum it has none of", r.name, err)
		}
	}
}
