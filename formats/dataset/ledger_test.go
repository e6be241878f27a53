package dataset

import (
	"context"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// commitApplied commits one snapshot that records n new ledger entries,
// numbered from first.
func commitApplied(t *testing.T, d *Dataset, first, n int) *Manifest {
	t.Helper()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := first; i < first+n; i++ {
		tx.AddApplied(Applied{ID: fmt.Sprintf("id-%06d", i), Name: fmt.Sprintf("in-%d.parquet", i), Rows: int64(i),
			At: time.UnixMilli(int64(i) * 1000).UTC()})
	}
	m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test", Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLedgerFilesStayFewAndComplete(t *testing.T) {
	cases := []struct {
		name    string
		perPass int
		passes  int
	}{
		{"cron passes of one input", 1, 200},
		{"passes of 70 inputs", 70, 40},
		{"one pass of 3000 inputs", 3000, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openNew(t)
			var m *Manifest
			for p := 0; p < c.passes; p++ {
				m = commitApplied(t, d, p*c.perPass, c.perPass)
				if len(m.Applied) != 0 {
					t.Fatalf("pass %d: the manifest holds %d ledger entries", p, len(m.Applied))
				}
			}
			total := c.perPass * c.passes
			files := m.Table(TableLedger).Partitions[""]
			if limit := bits.Len(uint(total)) + 1; len(files) > limit {
				t.Fatalf("%d ledger files for %d entries (at most %d)", len(files), total, limit)
			}
			if m.LedgerLen() != int64(total) {
				t.Fatalf("LedgerLen %d, want %d", m.LedgerLen(), total)
			}
			// Ask about every third id and a few never applied.
			var ask []string
			for i := 0; i < total; i += 3 {
				ask = append(ask, fmt.Sprintf("id-%06d", i))
			}
			ask = append(ask, "id-never", fmt.Sprintf("id-%06d", total), "")
			applied, err := d.AppliedAmong(m, ask)
			if err != nil {
				t.Fatal(err)
			}
			if len(applied) != len(ask)-3 {
				t.Fatalf("%d of %d asked found applied, want %d", len(applied), len(ask), len(ask)-3)
			}
			for _, id := range ask[:len(ask)-3] {
				if !applied[id] {
					t.Fatalf("%s lost", id)
				}
			}
			all, err := d.LedgerEntries(m)
			if err != nil || len(all) != total {
				t.Fatalf("LedgerEntries: %d, %v", len(all), err)
			}
			for i, a := range all {
				want := Applied{ID: fmt.Sprintf("id-%06d", i), Name: fmt.Sprintf("in-%d.parquet", i), Rows: int64(i),
					At: time.UnixMilli(int64(i) * 1000).UTC()}
				if a != want {
					t.Fatalf("entry %d: %+v, want %+v", i, a, want)
				}
			}
			// The ledger table is published like the others.
			got, _ := filepath.Glob(filepath.Join(d.Dir, "ledger", "current", "*.parquet"))
			if len(got) != len(files) {
				t.Fatalf("ledger/current holds %d files, the manifest %d", len(got), len(files))
			}
			// Old snapshots' ledger folders go with them (Keep: 2).
			if vs, _ := os.ReadDir(filepath.Join(d.Dir, "ledger", "v")); len(vs) > 2 {
				t.Fatalf("%d ledger snapshot folders kept, want at most 2", len(vs))
			}
			if problems := verifyAll(t, d, m); len(problems) > 0 {
				t.Fatalf("verify: %v", problems)
			}
		})
	}
}

func verifyAll(t *testing.T, d *Dataset, m *Manifest) []Problem {
	t.Helper()
	r, err := Verify(context.Background(), d.Files(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Problems
}

// A ledger file that cannot be read is an error, never an empty ledger:
// treating its inputs as new would apply them twice.
func TestDamagedLedgerFileIsAnError(t *testing.T) {
	cases := []struct {
		name   string
		damage func(path string) error
	}{
		{"missing", os.Remove},
		{"truncated", func(p string) error {
			info, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, info.Size()/2)
		}},
		{"one byte changed", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0x40
			return os.WriteFile(p, b, 0o644)
		}},
		{"not parquet", func(p string) error { return os.WriteFile(p, []byte("PAR1 but not really\n"), 0o644) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openNew(t)
			m := commitApplied(t, d, 0, 3)
			tl := m.Table(TableLedger)
			if len(tl.Partitions[""]) != 1 {
				t.Fatalf("ledger files %+v", tl.Partitions)
			}
			if err := c.damage(d.FilePath(tl, "", tl.Partitions[""][0])); err != nil {
				t.Fatal(err)
			}
			expectLedgerError(t, d, m)
		})
	}
}

// TestLedgerFileOfTheWrongShape: a file the manifest describes correctly
// but that does not hold what a ledger file must is an error too.
func TestLedgerFileOfTheWrongShape(t *testing.T) {
	cases := []struct {
		name  string
		write func(tx *Tx) (FileInfo, error)
	}{
		{"another table's file", func(tx *Tx) (FileInfo, error) {
			return WriteStaged(tx, TableLedger, "", []schema.State{{InfoHash: schema.Hash{1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}, {InfoHash: schema.Hash{2}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
		}},
		{"fewer entries than the manifest says", func(tx *Tx) (FileInfo, error) {
			fi, err := WriteStaged(tx, TableLedger, "", []ledgerRow{{ID: "a"}, {ID: "b"}})
			fi.Rows = 3
			return fi, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openNew(t)
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			fi, err := c.write(tx)
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(TableLedger, "", []FileInfo{fi})
			m, err := tx.Commit(context.Background(), CommitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			expectLedgerError(t, d, m)
		})
	}
}

func expectLedgerError(t *testing.T, d *Dataset, m *Manifest) {
	t.Helper()
	if applied, err := d.AppliedAmong(m, []string{"id-000000"}); err == nil {
		t.Fatalf("read as a ledger (%v)", applied)
	} else {
		t.Log(err)
	}
	if _, err := d.LedgerEntries(m); err == nil {
		t.Fatal("LedgerEntries read it")
	}
}

// TestMigrateFromV3Ledger opens a format-3 dataset whose manifest holds a
// long ledger: it is moved into the ledger table, and no entry is lost.
func TestMigrateFromV3Ledger(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "manifests"), 0o755)
	m := &Manifest{FormatVersion: 3, Snapshot: 5, Tables: map[string]*Table{}}
	const n = 1000
	for i := range n {
		m.Applied = append(m.Applied, Applied{ID: fmt.Sprintf("sha-%d", i), Name: "in.parquet", Rows: 1})
	}
	writeManifest(filepath.Join(dir, "manifests", manifestName(5)), m)
	os.WriteFile(filepath.Join(dir, "CURRENT"), []byte(manifestName(5)), 0o644)

	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	if cur.FormatVersion != FormatVersion || cur.Snapshot != 6 || len(cur.Applied) != 0 || cur.LedgerLen() != n {
		t.Fatalf("after migrate: version %d snapshot %d, %d inline of %d", cur.FormatVersion, cur.Snapshot, len(cur.Applied), cur.LedgerLen())
	}
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("sha-%d", i))
	}
	applied, err := d.AppliedAmong(cur, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !applied[id] {
			t.Fatalf("%s lost in the migration", id)
		}
	}
}

// TestLedgerNamesAreUTF8: an input's name that is not UTF-8 (a file name
// may hold any bytes) is stored with those bytes escaped, so that DuckDB
// reads the ledger table; an entry an older version wrote raw reads
// escaped too, and is rewritten so when its file is rolled.
func TestLedgerNamesAreUTF8(t *testing.T) {
	const raw, want = "bad\xffname,\"x\".txt", `bad\xffname,"x".txt`
	d := openNew(t)
	// An old ledger file, its name raw.
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := WriteStaged(tx, TableLedger, "", []ledgerRow{{ID: "old", Name: "old\xfe" + raw, Rows: 1, At: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableLedger, "", []FileInfo{fi})
	if _, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	tx, err = d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tx.AddApplied(Applied{ID: "new", Name: raw, Rows: 2, At: time.UnixMilli(2000).UTC()})
	m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{`old\xfe` + want, want}
	all, err := d.LedgerEntries(m)
	if err != nil || len(all) != 2 {
		t.Fatalf("LedgerEntries: %+v, %v", all, err)
	}
	for i, a := range all {
		if a.Name != wantNames[i] {
			t.Fatalf("entry %d: name %q, want %q", i, a.Name, wantNames[i])
		}
	}
	// What DuckDB reads: the published files (the old one was rolled
	// into the new: one entry each is at most twice the other).
	files, _ := filepath.Glob(filepath.Join(d.Dir, "ledger", "current", "*.parquet"))
	var names []string
	for _, f := range files {
		rows, err := ReadFile[ledgerRow](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			names = append(names, r.Name)
		}
	}
	if fmt.Sprint(names) != fmt.Sprint(wantNames) {
		t.Fatalf("ledger files hold names %q, want %q", names, wantNames)
	}
}
