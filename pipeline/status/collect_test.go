package status

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// commitState commits a snapshot of the dataset at dir whose partition 80
// holds one more hash, with keep as the writer's --keep: with 1, the
// files of every older snapshot are collected.
func commitState(t *testing.T, dir string, extra byte, keep int) {
	t.Helper()
	datasettest.CommitState(t, dir, schema.State{InfoHash: schema.Hash{0x80, extra}, HashType: 1, MetadataStatus: "new", Tier: "hot"}, keep)
}

// TestStatusStartsOverOnACollectedSnapshot: a commit with --keep 1 after
// status has read the manifest removes the files of its snapshot; status
// (and status --verify, which must not call them missing) reports the
// newer snapshot instead, a bounded number of times. A file missing from
// the snapshot that is still CURRENT stays damage.
func TestStatusStartsOverOnACollectedSnapshot(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		verify  bool
		every   bool // a commit after every manifest read, forever
		remove  bool // no commit: a file of the current snapshot is removed
		wantErr string
	}{
		{name: "status"},
		{name: "status --verify", verify: true},
		{name: "collected every time", every: true,
			wantErr: "status: 5 snapshots in a row were collected under status by newer commits (the last 6, now 7): run it again, or have the writers keep more snapshots (--keep): "},
		{name: "collected every time, --verify", verify: true, every: true,
			wantErr: "status: 5 snapshots in a row were collected under status by newer commits (the last 6, now 7): run it again, or have the writers keep more snapshots (--keep): "},
		{name: "damaged, not collected", remove: true, wantErr: "status: partition 80: "},
		{name: "damaged, not collected, --verify", verify: true, remove: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			commitState(t, dir, 1, 3) // snapshot 1
			commitState(t, dir, 2, 3) // snapshot 2
			commits := 0
			testSnapshotRead = func(snapshot int64) {
				switch {
				case tt.remove && commits == 0:
					commits++
					d, m := datasettest.OpenCurrent(t, dir)
					st := m.Table(dataset.TableState)
					err := os.Remove(d.FilePath(st, "80", st.Partitions["80"][0]))
					d.Close()
					if err != nil {
						t.Fatal(err)
					}
				case !tt.remove && (commits == 0 || tt.every):
					commits++
					commitState(t, dir, byte(2+commits), 1)
				}
			}
			defer func() { testSnapshotRead = nil }()
			r, err := Run(context.Background(), dir, now, Options{Verify: tt.verify})
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("got %v\nwant %s…: no such file", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.remove {
				v := r.Verified
				if v == nil || len(v.Problems) != 1 || v.Problems[0].What != "missing" || r.Snapshot != 2 {
					t.Fatalf("snapshot %d, verified %+v: want snapshot 2's removed file missing", r.Snapshot, v)
				}
				return
			}
			if v := r.Verified; tt.verify && (v == nil || len(v.Problems) > 0) {
				t.Fatalf("verified %+v, want no problem", v)
			}
			if r.Snapshot != 3 || r.Hashes != 3 || r.ByStatus["new"] != 3 {
				t.Fatalf("snapshot %d, %d hashes (%v): want snapshot 3's 3", r.Snapshot, r.Hashes, r.ByStatus)
			}
		})
	}
}
