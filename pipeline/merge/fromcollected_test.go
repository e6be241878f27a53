package merge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// commitToOther commits, as a writer of the other dataset with --keep 1,
// a partition 0xf0+n holding one new hash: its gc collects the files of
// the snapshot before.
func commitToOther(other string, n int) error {
	d, err := dataset.Open(context.Background(), other, dataset.OpenOptions{})
	if err != nil {
		return err
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		return err
	}
	h := hashAt(byte(0xf0+n), 1)
	key := fmt.Sprintf("%02x", h[0])
	fi, err := dataset.WriteStaged(tx, dataset.TableState, key, []schema.State{newHash(h, t0)})
	if err != nil {
		tx.Abort()
		return err
	}
	tx.SetPartition(dataset.TableState, key, []dataset.FileInfo{fi})
	_, err = tx.Commit(context.Background(), dataset.CommitOptions{Keep: 1, Writer: "other"})
	return err
}

// TestFromOtherCollected: a merge --from whose other dataset's snapshot
// is collected by the other's writers while it reads it (they committed
// with --keep 1 meanwhile) starts over on the other's newer snapshot, as
// status and export do, and unions that one; one whose other moves on at
// every try gives up after MaxReapply with the locked exit status,
// nothing committed. It failed at once with the missing file (exit 1).
// Giving up, it says that the other's writers collected the snapshot
// and what helps (a larger --keep there, or a pause): it said "locked
// by another writer", and the app added "retry later, or wait for it
// with --lock-wait D" (with --lock-wait: "still held when --lock-wait
// ran out", after seconds), though no writer held this dataset's lock
// and waiting for it changes nothing of the other's writers.
func TestFromOtherCollected(t *testing.T) {
	tests := []struct {
		name    string
		commits int // commits to the other while merge --from reads it, one a try
		code    int
	}{
		{"collected once", 1, exitcode.OK},
		{"collected at every try", dataset.MaxReapply + 1, exitcode.Locked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := makeDataset(t, []schema.State{newHash(hashAt(0x10, 1), t0), newHash(hashAt(0x20, 1), t0)})
			dir := makeDataset(t, nil)
			committed := 0
			testFromRead = func() {
				if committed < tt.commits {
					if err := commitToOther(other, committed); err != nil {
						t.Fatalf("commit to the other dataset: %v", err)
					}
					committed++
				}
			}
			defer func() { testFromRead = nil }()
			o := DefaultOptions()
			o.Data, o.From, o.Now = dir, other, tm(t0+hour)
			st, err := Run(context.Background(), o)
			if exitcode.Of(err) != tt.code {
				t.Fatalf("merge --from = %v (exit %d), want exit %d", err, exitcode.Of(err), tt.code)
			}
			states := readTable[schema.State](t, dir, dataset.TableState)
			if tt.code != exitcode.OK {
				if len(states) != 0 || committed != tt.commits {
					t.Fatalf("%d hashes in the dataset after %d commits to the other; want none after %d", len(states), committed, tt.commits)
				}
				msg := err.Error()
				if errors.Is(err, exitcode.ErrLocked) || !strings.Contains(msg, other) || !strings.Contains(msg, "collected") ||
					!strings.Contains(msg, "--keep") || strings.Contains(msg, "locked by another writer") {
					t.Fatalf("merge --from = %q (ErrLocked: %v); want it to name %s, say its writers collected the snapshot and"+
						" that a larger --keep there helps, not that this dataset is locked", msg, errors.Is(err, exitcode.ErrLocked), other)
				}
				return
			}
			// The other's snapshot 1 (made by makeDataset), then one
			// commit: the union is of snapshot 2, with its third hash.
			if st.Union.FromSnapshot != 2 || st.CommitConflicts != 1 || len(states) != 3 {
				t.Fatalf("unioned snapshot %d of the other after %d conflicts: %d hashes; want snapshot 2, 1, 3",
					st.Union.FromSnapshot, st.CommitConflicts, len(states))
			}
		})
	}
}
