package dataset

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestMigrationRecorded: Open records the migration it commits (the
// format it came from, the snapshot, and whether it gave a copy its own
// id), and KeptMigration hands it on in a writer's error, unchanged in
// its text: a run that stops before its own commit says what it
// committed. A dataset of the current format records none.
func TestMigrationRecorded(t *testing.T) {
	for _, tt := range []struct {
		name           string
		older, copied  bool
		wantIdentified bool
	}{
		{"current format", false, false, false},
		{"older format", true, false, false},
		{"older format, copied", true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := madeDataset(t)
			cur := openWriter(t, dir, OpenOptions{})
			if tt.older {
				editManifest(t, filepath.Join(dir, "manifests", manifestName(cur.Snapshot)), func(m map[string]any) {
					m["format_version"] = FormatVersion - 1
				})
			}
			if tt.copied {
				dst := filepath.Join(t.TempDir(), "copy")
				copyTree(t, dir, dst)
				dir = dst
			}
			d, err := Open(context.Background(), dir, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			stop := errors.New("stopped")
			err = d.KeptMigration(stop)
			if err.Error() != stop.Error() || !errors.Is(err, stop) {
				t.Fatalf("KeptMigration(%v) = %v, not the same error", stop, err)
			}
			got, ok := MigrationOf(err)
			if !tt.older {
				if ok || d.Migration() != nil {
					t.Fatalf("a dataset of the current format records a migration: %+v", got)
				}
				return
			}
			now, err := d.Current()
			if err != nil {
				t.Fatal(err)
			}
			want := Migrated{Dir: dir, From: FormatVersion - 1, Snapshot: cur.Snapshot + 1, Identified: tt.wantIdentified}
			if !ok || *got != want || now.Snapshot != want.Snapshot {
				t.Fatalf("migration %+v (%v), want %+v; current snapshot %d", got, ok, want, now.Snapshot)
			}
			if d.KeptMigration(nil) != nil {
				t.Fatal("KeptMigration(nil) is not nil")
			}
		})
	}
}
