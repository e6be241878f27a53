package dataset

import (
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// oldStateDataset makes a dataset as format version left it: its one
// state file (partition 00) holds rows in their own, older schema, and
// the manifest's entry for it has the file's size, checksums and that
// format. It returns the dataset folder, the file's path and footer sum,
// and the manifest as written.
func oldStateDataset[T any](t *testing.T, version int, rows []T) (dir, path string, sum rowio.FooterSum, m *Manifest) {
	t.Helper()
	dir, mpath, name := damagedDataset(t, func(map[string]any) {})
	editManifest(t, mpath, func(m map[string]any) {
		st := m["tables"].(map[string]any)[TableState].(map[string]any)
		path = filepath.Join(dir, st["dir"].(string), "prefix=00", name)
		if err := parquet.WriteFile(path, rows); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum = sumOf(t, path)
		f := st["partitions"].(map[string]any)["00"].([]any)[0].(map[string]any)
		f["size"], f["crc32c"] = len(b), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
		f["footer_size"], f["footer_crc32c"] = sum.Size, sum.CRC32C
		m["format_version"] = version
	})
	m, err := readManifest(mpath)
	if err != nil {
		t.Fatal(err)
	}
	return dir, path, sum, m
}

// migratedStateFile opens dir as a writer does, which migrates it to the
// current format in one commit after old's snapshot keeping its
// dataset_id, and returns the open dataset (closed with the test), its
// current manifest and partition 00's state file as rewritten.
func migratedStateFile(t *testing.T, dir string, old *Manifest) (*Dataset, *Manifest, *parquet.File) {
	t.Helper()
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	cur, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	if cur.FormatVersion != FormatVersion || cur.Snapshot != old.Snapshot+1 || (old.DatasetID != "" && cur.DatasetID != old.DatasetID) {
		t.Fatalf("after migrate: version %d snapshot %d id %q (was %q)", cur.FormatVersion, cur.Snapshot, cur.DatasetID, old.DatasetID)
	}
	st := cur.Table(TableState)
	f, err := os.Open(d.FilePath(st, "00", st.Partitions["00"][0]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, info.Size())
	if err != nil {
		t.Fatal(err)
	}
	return d, cur, pf
}

// checkStateMigration checks the older-format state file oldStateDataset
// made (dir, path, sum, m): read as readers read it, unmigrated, it lacks
// exactly the columns lacks (read as the current format, the first is
// named missing: damage), and its one row is as check wants; after a
// writer's open migrates the dataset, the row still is, and the rewritten
// file has each column of cols (a path in the schema).
func checkStateMigration(t *testing.T, dir, path string, sum rowio.FooterSum, m *Manifest, lacks []string,
	check func(what string, g schema.State), cols ...[]string) {
	t.Helper()
	read := func(what string, got []schema.State, err error) {
		t.Helper()
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %+v, %v", what, got, err)
		}
		check(what, got[0])
	}
	if got := m.StateLacks(); got != statecol.ColumnsNamed(lacks...) {
		t.Fatalf("format %d lacks %v, want %v", m.FormatVersion, got.Names(), lacks)
	}
	got, err := statecol.ReadStateFile(rowio.RecordedFile(path, sum, lacks...))
	read(fmt.Sprintf("format %d, unmigrated", m.FormatVersion), got, err)
	// The current format lacks nothing: a missing column is damage.
	if _, err := statecol.ReadStateFile(rowio.RecordedFile(path, sum)); err == nil ||
		!strings.Contains(err.Error(), `no column "`+lacks[0]) {
		t.Fatalf("a file without %s read as of the current format: %v", lacks[0], err)
	}
	d, cur, pf := migratedStateFile(t, dir, m)
	got, err = ReadPartition[schema.State](d, cur.Table(TableState), "00")
	read("migrated", got, err)
	for _, col := range cols {
		if _, ok := pf.Schema().Lookup(col...); !ok {
			t.Errorf("migrated file lacks %s", strings.Join(col, "."))
		}
	}
}
