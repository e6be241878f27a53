package merge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestFromOlderColdVictims: merge --from a dataset of format 11 (its
// state files without peers_at and info_hash_v2_source) whose victims of
// fetch's old v2 check (failed, hash_mismatch, hash_type 2, an
// info_hash_v2) are cold, in cold files, into a current dataset: the
// victims arrive repaired (bad_metadata 0, no avoid_peers, next_retry the
// run's clock), hot, in a hot (part-…) file, their history kept, and
// plan-retries plans them; every other row arrives as it was (the cold
// ones cold, in a cold file); the other dataset is left as it was, and
// merging it again, at a later clock, commits nothing.
func TestFromOlderColdVictims(t *testing.T) {
	cold := func(st schema.State) schema.State { st.Tier = schema.TierCold; return st }
	failed := func(h schema.Hash, typ int8, v2 []byte, failure string) schema.State {
		st := newHash(h, t0)
		st.HashType, st.InfoHashV2 = typ, v2
		st.MetadataStatus, st.Attempts, st.LastAttempt, st.LastFailure = schema.StatusFailed, 3, t0+hour, failure
		st.LastFailureAt, st.NextRetry, st.BackoffStep, st.BadMetadata = t0+hour, t0+30*day, 2, 2
		st.AvoidPeers = []string{"127.0.0.1:1", "127.0.0.1:2"}
		return cold(st)
	}
	victim1, victim2 := hashAt(0x61, 1), hashAt(0x62, 1)
	v1Bad, v2NoPeers, v2NoClaim, hot := hashAt(0x61, 2), hashAt(0x61, 3), hashAt(0x61, 4), hashAt(0x61, 5)
	theirs := map[schema.Hash]schema.State{
		victim1:   failed(victim1, schema.HashV2, v2Of(victim1, 7), schema.OutcomeHashMismatch),
		victim2:   failed(victim2, schema.HashV2, v2Of(victim2, 8), schema.OutcomeHashMismatch),
		v1Bad:     failed(v1Bad, schema.HashV1, nil, schema.OutcomeHashMismatch),
		v2NoPeers: failed(v2NoPeers, schema.HashV2, v2Of(v2NoPeers, 9), schema.OutcomeNoPeers),
		v2NoClaim: failed(v2NoClaim, schema.HashV2, nil, schema.OutcomeHashMismatch),
		hot:       newHash(hot, t0),
	}
	other := t.TempDir()
	commitV11(t, other, map[string][]datasettest.StateFile{
		"61": {{Rows: []schema.State{theirs[hot]}},
			{Name: schedule.ColdFileName(), Rows: []schema.State{theirs[victim1], theirs[v1Bad], theirs[v2NoPeers], theirs[v2NoClaim]}}},
		"62": {{Name: schedule.ColdFileName(), Rows: []schema.State{theirs[victim2]}}},
	})
	files := datasettest.Files(t, other, dataset.TableState, "61")
	if len(files) != 2 || !schedule.IsColdFile(filepath.Base(files[1])) {
		t.Fatalf("the other's partition 61: %q, want a hot file and a cold one", files)
	}
	for _, f := range files {
		if cols := parquetColumns(t, f); slices.Contains(cols, "info_hash_v2_source") || !slices.Contains(cols, "last_failure_at") {
			t.Fatalf("%s has the columns %v, not format 11's", f, cols)
		}
	}
	otherDigests := datasettest.Digests(t, other)
	mineOnly := hashAt(0x63, 1)
	mine := makeDataset(t, []schema.State{newHash(mineOnly, t0)})

	now := t0 + 2*day
	if st := runFromT(t, mine, other, now); st.Union.HashesAdded != int64(len(theirs)) {
		t.Fatalf("union stats %+v, want %d hashes added", st.Union, len(theirs))
	}
	got := stateOf(t, mine)
	if len(got) != len(theirs)+1 {
		t.Fatalf("%d hashes after the union, want %d", len(got), len(theirs)+1)
	}
	for h, was := range theirs {
		want := was
		if h == victim1 || h == victim2 {
			want.BadMetadata, want.AvoidPeers, want.NextRetry, want.Tier = 0, nil, now, schema.TierHot
		}
		// As text: a null list and an empty one read alike.
		if g, w := fmt.Sprintf("%+v", got[h]), fmt.Sprintf("%+v", want); g != w {
			t.Errorf("%x:\n got %s\nwant %s", h[:1], g, w)
		}
		if inHot := inHotFile(t, mine, h); inHot != (want.Tier == schema.TierHot) {
			t.Errorf("%x (tier %s) in a hot file: %v", h[:1], want.Tier, inHot)
		}
	}
	if datasettest.Digests(t, other) != otherDigests {
		t.Errorf("merge --from changed the other dataset")
	}

	// Again, later: the other is merged already, nothing is repaired anew.
	before, digests := datasettest.Snapshot(t, mine), datasettest.Digests(t, mine)
	if st := runFromT(t, mine, other, now+day); !st.Union.AlreadyMerged {
		t.Errorf("merging again: %+v, want already merged", st.Union)
	}
	if datasettest.Snapshot(t, mine) != before || datasettest.Digests(t, mine) != digests {
		t.Errorf("merging again committed (snapshot %d, was %d) or changed files", datasettest.Snapshot(t, mine), before)
	}

	// Due: plan-retries plans the victims (and the new hashes), not the
	// others, which wait until t0+30 days.
	planned := map[schema.Hash]bool{}
	for _, j := range planJobs(t, mine, now+hour, 100) {
		planned[j.InfoHash] = true
	}
	for h, want := range map[schema.Hash]bool{victim1: true, victim2: true, v1Bad: false, v2NoPeers: false, v2NoClaim: false} {
		if planned[h] != want {
			t.Errorf("%x planned %v, want %v", h[:1], planned[h], want)
		}
	}
}

// commitV11 commits a snapshot of a new dataset at dir whose state
// partitions are parts, written as format 11 wrote them (StateV11: no
// peers_at, no info_hash_v2_source), and marks the dataset format 11.
func commitV11(t *testing.T, dir string, parts map[string][]datasettest.StateFile) {
	t.Helper()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for key, files := range parts {
		var fis []dataset.FileInfo
		for _, f := range files {
			slices.SortFunc(f.Rows, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
			rows := make([]schematest.StateV11, len(f.Rows))
			for i, r := range f.Rows {
				rows[i] = schematest.StateV11{StateV8: schematest.StateV8{StateV5: schematest.StateV5{InfoHash: r.InfoHash,
					InfoHashV2: r.InfoHashV2, HashType: r.HashType, FirstSeen: r.FirstSeen, LastSeen: r.LastSeen,
					SeenCount: r.SeenCount, LastSource: r.LastSource, Activity: r.Activity, MetadataStatus: r.MetadataStatus,
					Attempts: r.Attempts, LastAttempt: r.LastAttempt, LastFailure: r.LastFailure, NextRetry: r.NextRetry,
					Tier: r.Tier, BackoffStep: r.BackoffStep, BadMetadata: r.BadMetadata, AvoidPeers: r.AvoidPeers},
					Peers: r.Peers}, FirstSource: r.FirstSource, LastFailureAt: r.LastFailureAt}
			}
			name := f.Name
			if name == "" {
				name = dataset.NewName(".parquet")
			}
			fi, err := dataset.WriteStagedAs(tx, dataset.TableState, key, name, rows)
			if err != nil {
				t.Fatal(err)
			}
			fis = append(fis, fi)
		}
		tx.SetPartition(dataset.TableState, key, fis)
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	datasettest.SetFormatVersion(t, dir, 11)
}

// parquetColumns lists the top-level columns of the Parquet file at path.
func parquetColumns(t *testing.T, path string) []string {
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
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range pf.Schema().Fields() {
		cols = append(cols, c.Name())
	}
	return cols
}
