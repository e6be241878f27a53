package main

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
)

// TestShapedAsDedupLeavesIt: a stategen dataset holds what dedup leaves
// in one, so that status, README's queries and the benchmarks see the
// shape users have. Both datasets, stategen's and one dedup made, are
// checked alike: a never-tried hash has a next_retry (dedup sets the
// run's clock; stategen left it null, which README's "next_retry <= …"
// queries did not count as due while status did), and every state
// partition has a Bloom filter counting its rows that dedup loads and
// trusts: a batch of hashes new to the dataset is all Bloom negatives
// (but false positives), and of known ones all positives, confirmed.
func TestShapedAsDedupLeavesIt(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	top := t.TempDir()
	gen := filepath.Join(top, "stategen")
	if err := run(gen, 2000, now.UnixMilli(), 1, 2); err != nil {
		t.Fatalf("stategen: %v", err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	ded := filepath.Join(top, "dedup")
	applyHashes(t, ded, randomHashes(r, 2000), now.Add(-time.Hour))
	for _, tc := range []struct{ name, dir string }{{"dedup", ded}, {"stategen", gen}} {
		t.Run(tc.name, func(t *testing.T) {
			known := checkShape(t, tc.dir)
			fresh := randomHashes(r, 300)
			st := applyHashes(t, tc.dir, append(fresh, known[:100]...), now)
			if st.New != 300 || st.ConfirmedKnown != 100 {
				t.Fatalf("dedup of 300 new and 100 known hashes: new %d, confirmed known %d", st.New, st.ConfirmedKnown)
			}
			if st.BloomNegatives < 290 || st.BloomPositives != 400-st.BloomNegatives || st.FalsePositives != st.BloomPositives-100 {
				t.Errorf("dedup loaded no Bloom filter it could trust: %d negatives, %d positives, %d false, "+
					"want about 300 negatives (new hashes) and 100 positives (known)", st.BloomNegatives, st.BloomPositives, st.FalsePositives)
			}
		})
	}
}

// checkShape checks the state of the dataset at dir as the test says,
// and returns some of its hashes.
func checkShape(t *testing.T, dir string) []schema.Hash {
	t.Helper()
	d, m := datasettest.OpenCurrent(t, dir)
	defer d.Close()
	tb := m.Table(dataset.TableState)
	var known []schema.Hash
	never := 0
	for key := range tb.Partitions {
		rows, err := dataset.ReadPartition[schema.State](d, tb, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range rows {
			if st.MetadataStatus == schema.StatusNew {
				never++
				if st.NextRetry == 0 {
					t.Errorf("partition %s: never-tried hash %x has a null next_retry", key, st.InfoHash)
				}
			}
			known = append(known, st.InfoHash)
		}
		bf, ok := tb.Blooms[key]
		if !ok {
			t.Errorf("partition %s (%d rows) has no Bloom filter", key, len(rows))
		} else if bf.Rows < int64(len(rows)) {
			t.Errorf("partition %s: its Bloom filter counts %d keys, the partition has %d rows", key, bf.Rows, len(rows))
		}
	}
	if never == 0 || len(known) < 100 {
		t.Fatalf("%d hashes, %d never tried: the check sees nothing", len(known), never)
	}
	return known
}

func randomHashes(r *rand.Rand, n int) []schema.Hash {
	out := make([]schema.Hash, n)
	for i := range out {
		for j := range out[i] {
			out[i][j] = byte(r.Uint32())
		}
	}
	return out
}

// applyHashes runs dedup on a list of hashes at now, into dir.
func applyHashes(t *testing.T, dir string, hashes []schema.Hash, now time.Time) dedup.Stats {
	t.Helper()
	var b strings.Builder
	for _, h := range hashes {
		b.WriteString(hex.EncodeToString(h[:]) + "\n")
	}
	list := filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	o := dedup.DefaultOptions()
	o.Data, o.Inputs, o.Now = dir, []string{list}, now
	st, err := dedup.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("dedup %s: %v", dir, err)
	}
	return st
}
