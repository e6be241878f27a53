package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestMergeAddedHashStaysOneRowBloom walks the sequence an audit found
// unguarded: dedup builds a partition's Bloom filter; merge adds a hash
// to that partition (the results of a fetch of a hash list that bypassed
// dedup, or merge --from a dataset that has the hash); dedup then sights
// the hash. It must find it known (the filter merge left would answer
// "surely new" and give the hash a second row).
func TestMergeAddedHashStaysOneRowBloom(t *testing.T) {
	dir := t.TempDir()
	known, added := "5a00000000000000000000000000000000000001", "5a00000000000000000000000000000000000002"
	list := func(name, hex string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("# "+name+"\n"+hex+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(args ...string) map[string]any {
		t.Helper()
		stats := filepath.Join(t.TempDir(), "stats.json")
		if _, stderr, code := runMain(t, append(args, "--stats-json", stats)...); code != 0 {
			t.Fatalf("infohash %v: exit %d: %s", args, code, stderr)
		}
		b, err := os.ReadFile(stats)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		add  func(t *testing.T, data string)
	}{
		{"results", func(t *testing.T, data string) {
			results := filepath.Join(t.TempDir(), "results.parquet")
			// a closed loopback port: the one attempt fails
			run("fetch", "--no-dht", "--peer", "127.0.0.1:1", "--timeout", "10s", "-o", results, list("b.txt", added))
			if st := run("merge", "--data", data, results); st["unknown_hashes_added"] != 1.0 {
				t.Fatalf("merge: %v, want the hash added", st)
			}
		}},
		{"from", func(t *testing.T, data string) {
			other := filepath.Join(t.TempDir(), "other")
			run("dedup", "--data", other, list("b.txt", added))
			if st := run("merge", "--data", data, "--from", other); st["union"].(map[string]any)["hashes_added"] != 1.0 {
				t.Fatalf("merge --from: %v, want the hash added", st)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			run("dedup", "--data", data, list("a.txt", known))
			tc.add(t, data)
			st := run("dedup", "--data", data, list("c.txt", added))
			if st["new"] != 0.0 || st["confirmed_known"] != 1.0 || st["bloom_negatives"] != 0.0 {
				t.Errorf("dedup of the added hash: %v, want new 0, confirmed_known 1, bloom_negatives 0", st)
			}
			files, err := filepath.Glob(filepath.Join(data, dataset.TableState, "current", "prefix=*", "*.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			rows := map[string]int{}
			for _, f := range files {
				sts, err := dataset.ReadFile[schema.State](f)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range sts {
					rows[schema.Hex(s.InfoHash)]++
				}
			}
			if len(rows) != 2 || rows[known] != 1 || rows[added] != 1 {
				t.Fatalf("state rows per hash: %v, want one each of %s and %s", rows, known, added)
			}
		})
	}
}
