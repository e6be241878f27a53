package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
)

// dedupHashes applies a new hash list naming hs (name makes it an input
// of its own: the ledger skips one it has applied) to dir at now.
func dedupHashes(t *testing.T, dir, name string, now int64, hs ...schema.Hash) dedup.Stats {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	text := "# " + name + "\n"
	for _, h := range hs {
		text += schema.Hex(h) + "\n"
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	o := dedup.DefaultOptions()
	o.Data, o.Inputs, o.Now = dir, []string{path}, tm(now)
	st, err := dedup.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("dedup %s: %v", name, err)
	}
	return st
}

// hasBloom reports whether partition key of dir's state has a Bloom
// filter in its current snapshot.
func hasBloom(t *testing.T, dir, key string) bool {
	t.Helper()
	_, ok := datasettest.Current(t, dir).Table(dataset.TableState).Blooms[key]
	return ok
}

// TestMergeAddingAHashLeavesNoStaleBloom: a merge that adds a hash to a
// partition (a result for a hash the state lacks, or a hash only the
// other dataset of merge --from has) must not leave the partition's
// Bloom filter, which lacks that hash, in place: dedup would take its
// negative as "surely new" and give the hash a second row.
func TestMergeAddingAHashLeavesNoStaleBloom(t *testing.T) {
	known, added := hashAt(0x5a, 1), hashAt(0x5a, 2) // one partition
	key := fmt.Sprintf("%02x", known[0])
	for _, tc := range []struct {
		name string
		add  func(t *testing.T, dir string) // adds hash added to dir
	}{
		{"results", func(t *testing.T, dir string) {
			// fetch of a hash list that bypassed dedup: no lease, the
			// one attempt failed
			res := schema.Result{InfoHash: added, HashType: schema.HashV1, Attempt: 1, AttemptedAt: t0 + minute,
				Outcome: schema.OutcomeConnectFailed, PeerFailures: []schema.PeerFailure{
					{Addr: "127.0.0.1:1", Class: schema.OutcomeConnectFailed, At: t0 + minute}}}
			st := runMerge(t, dir, t0+2*minute, writeResults(t, []schema.Result{res}))
			if st.UnknownHashes != 1 || st.Applied != 1 {
				t.Fatalf("merge stats %+v, want the hash added and its failure applied", st)
			}
		}},
		{"from", func(t *testing.T, dir string) {
			other := filepath.Join(t.TempDir(), "other")
			dedupHashes(t, other, "other.txt", t0+minute, added)
			st := runFromT(t, dir, other, t0+2*minute)
			if st.Union.HashesAdded != 1 {
				t.Fatalf("union stats %+v, want the hash added", st.Union)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ih")
			dedupHashes(t, dir, "a.txt", t0, known)
			if !hasBloom(t, dir, key) {
				t.Fatalf("dedup left partition %s without a Bloom filter: the test proves nothing", key)
			}
			tc.add(t, dir)
			st := dedupHashes(t, dir, "b.txt", t0+hour, added)
			if st.New != 0 || st.ConfirmedKnown != 1 || st.BloomNegatives != 0 {
				t.Errorf("dedup of the added hash: new=%d confirmed_known=%d bloom_negatives=%d, want 0, 1, 0",
					st.New, st.ConfirmedKnown, st.BloomNegatives)
			}
			s := stateOf(t, dir) // fails on a second row for a hash
			if len(s) != 2 {
				t.Fatalf("%d hashes in the state, want 2", len(s))
			}
			if got := s[added]; got.LastSeen != t0+hour {
				t.Errorf("the added hash's last_seen is %d, want the sighting's %d", got.LastSeen, t0+hour)
			}
		})
	}
}
