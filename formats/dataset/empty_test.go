package dataset

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// otherEmptyTables is how many 0-row files a snapshot whose commits only
// wrote state rows holds: one for each other table.
var otherEmptyTables = len(emptyTables) - 1

// emptyFileSchema is the Parquet schema each table's 0-row file has:
// the table's row type's.
var emptyFileSchema = map[string]*parquet.Schema{
	TableState:    parquet.SchemaOf(new(schema.State)),
	TableTorrents: parquet.SchemaOf(new(schema.Torrent)),
	TablePeers:    parquet.SchemaOf(new(schema.PeerPenalty)),
	TableLeases:   parquet.SchemaOf(new(schema.Lease)),
	TableLedger:   parquet.SchemaOf(new(ledgerRow)),
}

// columnsOf lists a Parquet schema's leaf columns with their types.
func columnsOf(s *parquet.Schema) []string {
	var out []string
	for _, p := range s.Columns() {
		leaf, _ := s.Lookup(p...)
		out = append(out, filepath.Join(p...)+" "+leaf.Node.Type().String())
	}
	return out
}

// checkEmptyTable checks that table has exactly one file, 0 rows, in the
// documented glob (through its current link), with the table's schema,
// and returns that file's name.
func checkEmptyTable(t *testing.T, d *Dataset, m *Manifest, table string) string {
	t.Helper()
	tb := m.Tables[table]
	if tb == nil {
		t.Fatalf("%s: no table in snapshot %d", table, m.Snapshot)
	}
	key := emptyTables[slices.IndexFunc(emptyTables, func(e emptyTable) bool { return e.name == table })].key
	files := tb.Partitions[key]
	if len(tb.Partitions) != 1 || len(files) != 1 || files[0].Rows != 0 {
		t.Fatalf("%s: partitions %v, want one 0-row file in partition %q", table, tb.Partitions, key)
	}
	glob := filepath.Join(d.Dir, table, "current", "*.parquet")
	if key != "" {
		glob = filepath.Join(d.Dir, table, "current", "prefix=*", "*.parquet")
	}
	matches, _ := filepath.Glob(glob)
	if len(matches) != 1 || filepath.Base(matches[0]) != files[0].Name {
		t.Fatalf("%s: %s matches %v, want its file %s", table, glob, matches, files[0].Name)
	}
	f, err := os.Open(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	if pf.NumRows() != 0 {
		t.Errorf("%s: %d rows, want 0", table, pf.NumRows())
	}
	if got, want := columnsOf(pf.Schema()), columnsOf(emptyFileSchema[table]); !slices.Equal(got, want) {
		t.Errorf("%s: columns\n%v\nwant\n%v", table, got, want)
	}
	return files[0].Name
}

// TestCommitGivesEmptyTablesAFile: every table of a committed snapshot
// has a file for the documented glob to match, one with 0 rows and the
// table's schema when it is empty (and status --verify checks it); a
// commit that puts rows into the table drops it, one that empties the
// table writes it again, and one that leaves an empty table alone keeps
// its file.
func TestCommitGivesEmptyTablesAFile(t *testing.T) {
	ctx := context.Background()
	d := openNew(t)
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	m, err := tx.Commit(ctx, CommitOptions{Writer: "test"}) // a commit of nothing
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for _, e := range emptyTables {
		first[e.name] = checkEmptyTable(t, d, m, e.name)
	}
	v, err := Verify(ctx, d.Files(m), nil)
	if err != nil || v.Files != len(emptyTables) || len(v.Problems) != 0 {
		t.Fatalf("verify: %+v, %v; want %d files, no problems", v, err, len(emptyTables))
	}

	// Rows in partition ab of the state: its 0-row file in prefix=00 goes.
	m = commitRows(t, d, "ab", []schema.State{{InfoHash: schema.Hash{0xab, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	if st := m.Tables[TableState]; len(st.Partitions) != 1 || len(st.Partitions["ab"]) != 1 {
		t.Fatalf("state partitions %v, want only ab's file", st.Partitions)
	}
	if n := globRows(t, d); n != 1 {
		t.Fatalf("glob sees %d rows, want 1", n)
	}
	// The tables the commit left alone keep their file, linked over.
	for _, name := range []string{TableTorrents, TablePeers, TableLeases, TableLedger} {
		if got := checkEmptyTable(t, d, m, name); got != first[name] {
			t.Errorf("%s: file %s, want the one kept from before, %s", name, got, first[name])
		}
	}

	// Leases written, then emptied (merge freed them all): a 0-row file.
	tx, err = d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := WriteStaged(tx, TableLeases, "", []schema.Lease{{InfoHash: schema.Hash{0xab, 1}, LeaseID: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableLeases, "", []FileInfo{fi})
	if m, err = tx.Commit(ctx, CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	if ls := m.Tables[TableLeases].Partitions[""]; len(ls) != 1 || ls[0].Rows != 1 {
		t.Fatalf("leases %v, want the one file of 1 row", ls)
	}
	tx, err = d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableLeases, "", nil)
	if m, err = tx.Commit(ctx, CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	checkEmptyTable(t, d, m, TableLeases)
	v, err = Verify(ctx, d.Files(m), nil)
	if err != nil || v.Files != 1+otherEmptyTables || len(v.Problems) != 0 {
		t.Fatalf("verify: %+v, %v; want %d files, no problems", v, err, 1+otherEmptyTables)
	}
}
