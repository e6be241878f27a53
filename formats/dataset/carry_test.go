package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestCommitRefusesToCarryOverADamagedFile: a commit that leaves a
// partition untouched hard-links its file into the new snapshot, and
// every snapshot then shares the one damaged inode. A file whose size is
// no longer the manifest's (truncated, grown, removed) makes the commit
// fail, naming the file and pointing at status --verify, and publishes
// nothing. Only the size is checked (one stat a file): a file altered at
// the same size is still carried over; status --verify finds it.
func TestCommitRefusesToCarryOverADamagedFile(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, path string, size int64)
		want   string // the error's end, with {path} for the damaged file ("" if the commit goes ahead)
	}{
		{"truncated", func(t *testing.T, p string, size int64) {
			if err := os.Truncate(p, 100); err != nil {
				t.Fatal(err)
			}
		}, "{path}: 100 bytes, the manifest says SIZE: damaged (status --verify lists every damaged file; restore them from a backup of the dataset, see status --help)"},
		{"grown", func(t *testing.T, p string, size int64) {
			if err := os.Truncate(p, size+1); err != nil {
				t.Fatal(err)
			}
		}, "{path}: SIZE+1 bytes, the manifest says SIZE: damaged ("},
		{"removed", func(t *testing.T, p string, size int64) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}, "{path}: missing: damaged ("},
		{"same size, other bytes", func(t *testing.T, p string, size int64) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[size/2] ^= 0xff
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0x00, 1}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
			base := commitRows(t, d, "01", []schema.State{{InfoHash: schema.Hash{0x01, 1}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
			st := base.Table(TableState)
			fi := st.Partitions["01"][0]
			path := d.FilePath(st, "01", fi)
			tt.damage(t, path, fi.Size)

			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			info, err := WriteStaged(tx, TableState, "00", []schema.State{{InfoHash: schema.Hash{0x00, 2}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(TableState, "00", []FileInfo{info})
			m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("a file damaged at the same size stopped the commit: %v", err)
				}
				res, err := Verify(context.Background(), d.Files(m), nil)
				if err != nil || len(res.Problems) != 1 {
					t.Fatalf("status --verify's check found %v (%v), want the altered file", res.Problems, err)
				}
				return
			}
			var de *DamagedFileError
			if !errors.As(err, &de) || m != nil {
				t.Fatalf("commit of %v: %v, want a DamagedFileError", m, err)
			}
			want := strings.NewReplacer("{path}", path, "SIZE+1", itoa(fi.Size+1), "SIZE", itoa(fi.Size)).Replace(tt.want)
			if got := err.Error(); !strings.Contains(got, want) || strings.Contains(got, "\n") {
				t.Fatalf("error %q\nwant one line with %q", got, want)
			}
			cur, err := d.Current()
			if err != nil || cur.Snapshot != base.Snapshot {
				t.Fatalf("current snapshot %v (%v), want %d: the commit published", cur, err, base.Snapshot)
			}
			if _, err := os.Stat(filepath.Join(d.Dir, TableState, "v", "000000000003")); err == nil {
				t.Fatal("the refused commit left its snapshot directory")
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCommitChecksUntouchedTables: a commit that does not touch a table
// at all (plan-retries commits only leases) links none of its files: the
// new manifest names the base's table directory as it is. A damaged file
// there (truncated, appended to, removed) must still stop the commit,
// with the DamagedFileError naming it, and publish nothing, as a damaged
// file a commit carries over does; a Bloom filter is checked too.
func TestCommitChecksUntouchedTables(t *testing.T) {
	for _, tt := range []struct {
		name   string
		bloom  bool // damage the partition's Bloom filter, not its data file
		damage func(p string, size int64) error
		want   string
	}{
		{"truncated", false, func(p string, size int64) error { return os.Truncate(p, 100) }, "{path}: 100 bytes, the manifest says SIZE: damaged (status --verify lists every damaged file; "},
		{"appended to", false, func(p string, size int64) error {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte("junk"))
			return err
		}, "{path}: SIZE+4 bytes, the manifest says SIZE: damaged ("},
		{"removed", false, func(p string, size int64) error { return os.Remove(p) }, "{path}: missing: damaged ("},
		{"Bloom filter truncated", true, func(p string, size int64) error { return os.Truncate(p, 1) }, "{path}: 1 bytes, the manifest says SIZE: damaged ("},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			info, err := WriteStaged(tx, TableState, "01", []schema.State{{InfoHash: schema.Hash{0x01, 1}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(TableState, "01", []FileInfo{info})
			bloom := []byte("a Bloom filter")
			p, err := tx.StagePath(TableState, "01", "bloom-1.bloom")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, bloom, 0o644); err != nil {
				t.Fatal(err)
			}
			bi, err := tx.Stage(TableState, "01", "bloom-1.bloom", 1) // one key: the partition's one hash
			if err != nil {
				t.Fatal(err)
			}
			tx.SetBloom(TableState, "01", bi)
			base, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
			if err != nil {
				t.Fatal(err)
			}
			st := base.Table(TableState)
			fi, path := st.Partitions["01"][0], d.FilePath(st, "01", st.Partitions["01"][0])
			if tt.bloom {
				fi = st.Blooms["01"]
				path = d.Path(st.BloomPath(fi))
			}
			if err := tt.damage(path, fi.Size); err != nil {
				t.Fatal(err)
			}

			tx, err = d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			li, err := WriteStaged(tx, TableLeases, "", []schema.Lease{{InfoHash: schema.Hash{0x01, 1}, LeaseID: "l1"}})
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(TableLeases, "", []FileInfo{li})
			m, err := tx.Commit(context.Background(), CommitOptions{Writer: "plan-retries"})
			var de *DamagedFileError
			if !errors.As(err, &de) || m != nil {
				t.Fatalf("commit of %v: %v, want a DamagedFileError", m, err)
			}
			want := strings.NewReplacer("{path}", path, "SIZE+4", itoa(fi.Size+4), "SIZE", itoa(fi.Size)).Replace(tt.want)
			if got := err.Error(); !strings.Contains(got, want) || strings.Contains(got, "\n") {
				t.Fatalf("error %q\nwant one line with %q", got, want)
			}
			cur, err := d.Current()
			if err != nil || cur.Snapshot != base.Snapshot {
				t.Fatalf("current snapshot %v (%v), want %d: the commit published", cur, err, base.Snapshot)
			}
			// The base commit wrote leases' 0-row file (empty.go) under its own
			// snapshot; the refused one must leave no folder of its own.
			if _, err := os.Stat(filepath.Join(d.Dir, TableLeases, "v", fmt.Sprintf("%012d", base.Snapshot+1))); err == nil {
				t.Fatalf("the refused commit left leases/v/%012d", base.Snapshot+1)
			}
			if _, err := os.Stat(filepath.Join(d.Dir, "manifests", manifestName(base.Snapshot+1))); err == nil {
				t.Fatal("the refused commit left its manifest")
			}
		})
	}
}
