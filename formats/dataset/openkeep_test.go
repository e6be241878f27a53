package dataset

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestOpensCommitKeepsSnapshots: the commit a writer's Open makes itself,
// a migration's, keeps the run's --keep snapshots (OpenOptions.Keep), as
// the run's own commit does, not the default 3: an upgrade of a dataset
// kept with --keep 10 lost all but its last 3 snapshots to its first
// writer. (A copy's new id is no commit of Open's: the run's own commit
// publishes it, with the run's --keep.)
func TestOpensCommitKeepsSnapshots(t *testing.T) {
	for _, c := range []struct {
		name   string
		writer string
		// prepare turns the dataset in dir into one Open commits on, and
		// returns where it is.
		prepare func(t *testing.T, dir string) string
	}{
		{"format 9", fmt.Sprintf("migrate 9→%d", FormatVersion), func(t *testing.T, dir string) string {
			name, _, err := readPointer(filepath.Join(dir, "CURRENT"))
			if err != nil {
				t.Fatal(err)
			}
			editManifest(t, filepath.Join(dir, "manifests", name), func(m map[string]any) { m["format_version"] = 9 })
			return dir
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := openNew(t)
			for i := range 6 {
				tx, err := d.Begin()
				if err != nil {
					t.Fatal(err)
				}
				key := fmt.Sprintf("%02x", i)
				info, err := WriteStaged(tx, TableState, key, []schema.State{{InfoHash: schema.Hash{byte(i)}, HashType: 1,
					SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
				if err != nil {
					t.Fatal(err)
				}
				tx.SetPartition(TableState, key, []FileInfo{info})
				if _, err := tx.Commit(context.Background(), CommitOptions{Keep: 10, Writer: "test"}); err != nil {
					t.Fatal(err)
				}
			}
			d.Close()
			dir := c.prepare(t, d.Dir)
			before := snapshotsIn(t, dir)
			m := openWriter(t, dir, OpenOptions{Keep: 10})
			if m.Writer != c.writer || m.Snapshot != 7 {
				t.Fatalf("Open committed snapshot %d by %q, want 7 by %q", m.Snapshot, m.Writer, c.writer)
			}
			if got, want := snapshotsIn(t, dir), append(before, "000000000007.json"); !slices.Equal(got, want) {
				t.Fatalf("with Keep 10, Open's commit left the manifests %v, want %v", got, want)
			}
		})
	}
}

// snapshotsIn lists the manifests in dir's dataset, sorted.
func snapshotsIn(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "manifests", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	slices.Sort(names)
	return names
}
