package dataset

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/schema"
)

// TestDatasetFileModes: every file of a committed dataset (CURRENT, the
// manifests, the data files, an inbox spool, LOCK) has mode 0666 less the
// umask, so that another user who can read the Parquet files can also
// read the commit pointer and manifests that status needs.
func TestDatasetFileModes(t *testing.T) {
	for _, umask := range []int{0o002, 0o022} {
		t.Run(fs.FileMode(umask).String(), func(t *testing.T) {
			old := unix.Umask(umask)
			t.Cleanup(func() { unix.Umask(old) })
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			if _, err := Spool(filepath.Join(d.Dir, "inbox"), ".tsv", strings.NewReader("x\n")); err != nil {
				t.Fatal(err)
			}
			lk, err := LockWriter(context.Background(), d.Dir, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			lk.Release()
			want := fs.FileMode(0o666 &^ umask)
			n := 0
			err = filepath.WalkDir(d.Dir, func(p string, e fs.DirEntry, err error) error {
				if err != nil || !e.Type().IsRegular() {
					return err
				}
				n++
				fi, err := e.Info()
				if err != nil {
					return err
				}
				if fi.Mode().Perm() != want {
					rel, _ := filepath.Rel(d.Dir, p)
					t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n < 5 {
				t.Fatalf("walked only %d files", n)
			}
		})
	}
}
