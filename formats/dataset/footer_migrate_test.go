package dataset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// format4Dataset makes a dataset whose state has rows in partitions 00
// and 01 (00 with a Bloom filter), with leases and peers, and rewrites
// its current manifest as format 4 wrote it (no footer checksums).
func format4Dataset(t *testing.T) (dir string, m4 *Manifest) {
	t.Helper()
	dir, path, _ := damagedDataset(t, func(map[string]any) {})
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	h := schema.Hash{1, 2}
	for _, w := range []func() error{
		func() error {
			fi, err := WriteStaged(tx, TableState, "01", []schema.State{{InfoHash: h, HashType: 1, SeenCount: 2, MetadataStatus: "new", Tier: "hot"}})
			tx.SetPartition(TableState, "01", []FileInfo{fi})
			return err
		},
		func() error {
			fi, err := WriteStaged(tx, TableLeases, "", []schema.Lease{{InfoHash: h, LeaseID: "L", LeaseUntil: 5, Reason: "new", PlannedAt: 1}})
			tx.SetPartition(TableLeases, "", []FileInfo{fi})
			return err
		},
		func() error {
			fi, err := WriteStaged(tx, TablePeers, "", []schema.PeerPenalty{{Addr: "127.0.0.1:1", Class: "rejected", Until: 5}})
			tx.SetPartition(TablePeers, "", []FileInfo{fi})
			return err
		},
	} {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(filepath.Dir(path), manifestName(m.Snapshot))
	editManifest(t, path, func(m map[string]any) { asFormat(m, 4) })
	if m4, err = readManifest(path); err != nil {
		t.Fatal(err)
	}
	return dir, m4
}

// TestMigrateRecordsFooters: opening a format 4 dataset for writing
// migrates it in one commit that records the footer checksum of every
// data file, each summed from the file's tail, and rewrites or moves no
// file but the state's (rewritten for format 6's peers column: every
// other table keeps its directory); the files then read through the
// checks.
func TestMigrateRecordsFooters(t *testing.T) {
	dir, m4 := format4Dataset(t)
	if m4.FormatVersion != 4 {
		t.Fatalf("format %d", m4.FormatVersion)
	}
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	if m.FormatVersion != FormatVersion || m.Snapshot != m4.Snapshot+1 || !strings.HasPrefix(m.Writer, "migrate 4→") {
		t.Fatalf("after the migration: format %d snapshot %d by %q", m.FormatVersion, m.Snapshot, m.Writer)
	}
	files := 0
	for name, tb := range m.Tables {
		if tb.Dir != m4.Tables[name].Dir && name != TableState {
			t.Errorf("table %s moved from %s to %s", name, m4.Tables[name].Dir, tb.Dir)
		}
		for key, fs := range tb.Partitions {
			for i, f := range fs {
				files++
				if old := m4.Tables[name].Partitions[key][i]; name != TableState && (old.Name != f.Name || old.CRC32C != f.CRC32C || old.Footer().Recorded()) {
					t.Errorf("%s %s: %+v was %+v", name, key, f, old)
				}
				if want := sumOf(t, d.FilePath(tb, key, f)); f.Footer() != want {
					t.Errorf("%s %s %s: footer %+v, the file's %+v", name, key, f.Name, f.Footer(), want)
				}
			}
		}
		for _, f := range tb.Blooms {
			if f.FooterSize != 0 || f.FooterCRC32C != 0 {
				t.Errorf("Bloom filter %s: footer %+v", f.Name, f.Footer())
			}
		}
	}
	if files != 6 { // state 00 and 01, torrents', leases', peers', the ledger's
		t.Fatalf("%d files", files)
	}
	rows, err := ReadPartition[schema.State](d, m.Table(TableState), "01")
	if err != nil || len(rows) != 1 || rows[0].SeenCount != 2 {
		t.Fatalf("reading the migrated state: %+v, %v", rows, err)
	}
}

// TestMigrateFootersOfADamagedFile: a format 4 file cut short (the
// leases', which the migration does not rewrite) stops the migration
// with an error naming it, and nothing is committed.
func TestMigrateFootersOfADamagedFile(t *testing.T) {
	dir, m4 := format4Dataset(t)
	st := m4.Table(TableLeases)
	path := filepath.Join(dir, st.PartitionDir(""), st.Partitions[""][0].Name)
	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err == nil {
		d.Close()
		t.Fatal("migrated a dataset with a file cut short")
	}
	if !strings.Contains(err.Error(), path+": 100 bytes, the manifest says") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, want one line naming %s", err, path)
	}
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if m, err := r.Current(); err != nil || m.Snapshot != m4.Snapshot || m.FormatVersion != 4 {
		t.Fatalf("after the failed migration: %+v, %v", m, err)
	}
}

// sumOf is the FooterSum of the Parquet file at path.
func sumOf(t *testing.T, path string) rowio.FooterSum {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	s, err := rowio.SumFooter(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return s
}
