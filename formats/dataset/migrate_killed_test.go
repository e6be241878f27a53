package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// TestMigrateRemovesKilledWritersDebris: the writer that migrates an
// older format also removes what killed writers left, as every writer's
// Open does on a current format: the staging folder of a migration
// killed while it rewrote the state's files (a copy of the whole state),
// a stale temporary file of a manifest. Before, the migration's Open
// returned before that upkeep, so the re-run of a killed migration left
// the killed one's staged files to the writer after it.
func TestMigrateRemovesKilledWritersDebris(t *testing.T) {
	for _, from := range []int{8, 9, 10, 11} {
		t.Run(fmt.Sprintf("format %d", from), func(t *testing.T) {
			dir, path, _ := damagedDataset(t, func(m map[string]any) { m["format_version"] = from })
			before, err := readManifest(path)
			if err != nil {
				t.Fatal(err)
			}
			// A migration killed mid-rewrite: its staging folder (locked
			// at birth, its flock gone with the process) holds a state file.
			s, err := (&Dataset{Dir: dir}).NewScratch()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.Dir, "00_part-1.parquet"), make([]byte, 100), 0o644); err != nil {
				t.Fatal(err)
			}
			s.owner.Close()
			tmp := filepath.Join(dir, "manifests", fsutil.TempPrefix+manifestName(before.Snapshot+1)+"-0a0b")
			if err := os.WriteFile(tmp, []byte("{"), 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-2 * time.Hour)
			if err := os.Chtimes(tmp, old, old); err != nil {
				t.Fatal(err)
			}

			cur := openWriter(t, dir, OpenOptions{})
			if cur.FormatVersion != FormatVersion || cur.Snapshot != before.Snapshot+1 {
				t.Fatalf("after the migration: format %d, snapshot %d; want %d, %d",
					cur.FormatVersion, cur.Snapshot, FormatVersion, before.Snapshot+1)
			}
			for what, p := range map[string]string{"the killed migration's staging folder": s.Dir, "a killed manifest write's temporary file": tmp} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the writer that migrated format %d left %s, %s (stat: %v)", from, what, p, err)
				}
			}
			if ents, err := os.ReadDir(filepath.Join(dir, "staging")); err != nil || len(ents) > 0 {
				t.Errorf("staging/ after the migration: %v, %v; want it empty", ents, err)
			}
			d, err := Open(context.Background(), dir, OpenOptions{})
			if err != nil {
				t.Fatalf("the next writer: %v", err)
			}
			d.Close()
		})
	}
}
