package plan

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/schema"
)

// TestDryRunReadsAnOlderFormat: a dry run without -o (--limit 0) on a
// dataset of an older format than this build's reads it as status does:
// nothing migrated (an older binary still opens it), a copy keeps its id,
// nothing under DIR touched (a killed writer's staging folder stays for
// the next writer). On the current format it still opens DIR as a writer,
// which removes that folder (killsweep relies on it), and keeps a copy's
// id (a writer's commit draws it; a dry run commits nothing). Either way
// it finds the same hashes due.
func TestDryRunReadsAnOlderFormat(t *testing.T) {
	for _, tt := range []struct {
		name   string
		older  bool // the dataset's manifest is of the format before this build's
		copied bool // the run is on a cp -a copy of the dataset
		reads  bool // the run only reads: DIR is left as it was
	}{
		{"current format", false, false, false},
		{"current format, copied", false, true, false},
		{"older format", true, false, true},
		{"older format, copied", true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(0x10, 1), ms(t0)), newHash(hashAt(0x20, 2), ms(t0))}, nil)
			if tt.older {
				datasettest.SetFormatVersion(t, dir, dataset.FormatVersion-1)
			}
			if tt.copied {
				copied := filepath.Join(t.TempDir(), "copy")
				if err := os.CopyFS(copied, os.DirFS(dir)); err != nil {
					t.Fatal(err)
				}
				dir = copied
			}
			killed := filepath.Join(dir, "staging", "4242-dead-o") // a killed writer's, no .owner held
			if err := os.MkdirAll(killed, 0o755); err != nil {
				t.Fatal(err)
			}
			before, tree := datasettest.Current(t, dir), fsutiltest.Tree(t, dir)

			o := DefaultOptions()
			o.Data, o.Now, o.Limit, o.Output, o.Stdout = dir, t0.Add(time.Minute), 0, "", nil
			st, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if st.Due != 2 || st.Planned != 0 {
				t.Errorf("due %d, planned %d; want 2 due, none planned", st.Due, st.Planned)
			}
			after := datasettest.Current(t, dir)
			if after.FormatVersion != before.FormatVersion || after.Snapshot != before.Snapshot || after.DatasetID != before.DatasetID {
				t.Errorf("format %d, snapshot %d, id %s after the dry run; want %d, %d, %s as before",
					after.FormatVersion, after.Snapshot, after.DatasetID, before.FormatVersion, before.Snapshot, before.DatasetID)
			}
			if _, err := os.Stat(killed); tt.reads != (err == nil) {
				t.Errorf("a killed writer's staging folder: stat %v; want it removed only by a writer (reads %v)", err, tt.reads)
			}
			if now := fsutiltest.Tree(t, dir); tt.reads && !reflect.DeepEqual(now, tree) {
				for p, s := range now {
					if tree[p] != s {
						t.Errorf("the dry run of an older format changed DIR: %s: %q, was %q", p, s, tree[p])
					}
				}
				for p := range tree {
					if _, ok := now[p]; !ok {
						t.Errorf("the dry run of an older format removed %s", p)
					}
				}
			}
		})
	}
}
