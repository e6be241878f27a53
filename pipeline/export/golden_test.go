package export

import (
	"context"
	"crypto/sha1"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
	"github.com/infohash/infohash/pipeline/merge"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenDataset builds a small dataset with the stages themselves, each
// with a fixed clock (--now): two dedup passes of hash lists (a v1 hash
// seen twice, a v2 hash, a v1 hash seen once), then a merge of fetch
// results in which the first is fetched (a two-file torrent whose name
// and paths need quoting and escaping) and the third failed with no
// peers.
func goldenDataset(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	info := bencode.MustMarshal(map[string]any{
		"name":         "Ünïcode, \"quoted\" <&> name",
		"piece length": 16384,
		"pieces":       strings.Repeat("p", 20),
		"files": []any{
			map[string]any{"length": 5, "path": []any{"dir", "a,b.txt"}},
			map[string]any{"length": 7, "path": []any{"c \"d\"\\e.bin"}},
		},
	})
	fetched := schema.Hash(sha1.Sum(info))
	const v2 = "8023456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const failed = "ff23456789abcdef0123456789abcdef01234567"
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	pass := func(name string, at time.Time, lines ...string) {
		t.Helper()
		list := filepath.Join(dir, name)
		if err := os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		o := dedup.DefaultOptions()
		o.Data, o.Inputs, o.Now = filepath.Join(dir, "ds"), []string{list}, at
		if _, err := dedup.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	pass("first.txt", t0, schema.Hex(fetched), v2, failed)
	pass("second.txt", t0.Add(time.Hour), schema.Hex(fetched))

	meta, err := infodict.Parse(info)
	if err != nil {
		t.Fatal(err)
	}
	failedHash, _, _, err := schema.ParseHex(failed)
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(90 * time.Minute).UnixMilli()
	results := filepath.Join(dir, "results.parquet")
	w, err := rowio.Create[schema.Result](results, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]schema.Result{
		{InfoHash: fetched, HashType: schema.HashV1, AttemptedAt: at, Outcome: schema.OutcomeOK, PeersFound: 2, PeersTried: 1,
			ServedBy: "127.0.0.1:6881", MetadataSize: int64(len(info)), ResultMeta: schema.OKMeta(meta)},
		{InfoHash: failedHash, HashType: schema.HashV1, AttemptedAt: at, Outcome: schema.OutcomeNoPeers},
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	o := merge.DefaultOptions()
	o.Data, o.Inputs, o.Now = filepath.Join(dir, "ds"), []string{results}, t0.Add(2*time.Hour)
	if _, err := merge.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.Data
}

// TestGolden: each text format of each hash table, exported from
// goldenDataset, is byte for byte its file under testdata/golden/
// (go test ./pipeline/export -run TestGolden -update rewrites them).
func TestGolden(t *testing.T) {
	data := goldenDataset(t)
	for _, table := range []string{"state", "torrents", "catalog"} {
		for _, format := range []string{"csv", "jsonl", "es-bulk", "magnet"} {
			name := table + "." + format
			t.Run(name, func(t *testing.T) {
				got := export(t, data, table, format, nil)
				golden := filepath.Join("testdata", "golden", name)
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
				}
				if string(got) != string(want) {
					t.Fatalf("got\n%s\nwant (%s; go test -run TestGolden -update rewrites it)\n%s", got, golden, want)
				}
			})
		}
	}
}
