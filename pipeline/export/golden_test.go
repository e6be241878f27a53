package export

import (
	"context"
	"crypto/sha1"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anacrolix/torrent/bencode"
	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
	"github.com/infohash/infohash/pipeline/dedup"
	"github.com/infohash/infohash/pipeline/merge"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenDataset builds a small dataset with the stages themselves, each
// with a fixed clock (--now): two dedup passes of hash lists (a v1 hash
// seen twice, a v2 hash, a v1 hash seen once), one of observations (two
// peers announce the third hash), then a merge of fetch
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
		o.AnnouncedPeers = true
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
	// Two peers announce the third hash: its peers column.
	obs := filepath.Join(dir, "announces.parquet")
	ow, err := rowio.Create[schema.Observation](obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	announced := func(node string, port int32, at time.Time) schema.Observation {
		return schema.Observation{InfoHash: failedHash, HashType: schema.HashV1, ObservedAt: at.UnixMilli(),
			Source: schema.SourceAnnouncePeer, NodeAddr: node, PeerPort: port, RunID: "golden"}
	}
	if err := ow.Write([]schema.Observation{announced("198.51.100.7:4000", 51413, t0.Add(30*time.Minute)),
		announced("[2001:db8::2]:4000", 6881, t0.Add(40*time.Minute))}); err != nil {
		t.Fatal(err)
	}
	if err := ow.Close(); err != nil {
		t.Fatal(err)
	}
	od := dedup.DefaultOptions()
	od.AnnouncedPeers = true // the announce_peer row below names a peer
	od.Data, od.Inputs, od.Now = filepath.Join(dir, "ds"), []string{obs}, t0.Add(time.Hour)
	if _, err := dedup.Run(context.Background(), od); err != nil {
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

// TestGolden: each text format of each hash table, and its Arrow IPC
// stream, exported from goldenDataset, is byte for byte its file under
// testdata/golden/ (go test ./pipeline/export -run TestGolden -update
// rewrites them).
func TestGolden(t *testing.T) {
	data := goldenDataset(t)
	for _, table := range []string{"state", "torrents", "catalog"} {
		for _, format := range []string{"csv", "jsonl", "es-bulk", "magnet", "arrow"} {
			name := table + "." + format
			t.Run(name, func(t *testing.T) {
				got := export(t, data, table, format, nil)
				golden := filepath.Join("testdata", "golden", name)
				goldentest.Check(t, golden, got, *update)
			})
		}
	}
}

// TestStatePeersInParquet: export --table state --format parquet has
// the peers column (the golden files show it in the text formats).
func TestStatePeersInParquet(t *testing.T) {
	data := goldenDataset(t)
	out := filepath.Join(t.TempDir(), "state.parquet")
	if err := os.WriteFile(out, export(t, data, "state", "parquet", nil), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.ReadFile[schema.State](out)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, r := range rows {
		if len(r.Peers) > 0 {
			got = append(got, r.Peers)
		}
	}
	if want := []string{"[2001:db8::2]:6881", "198.51.100.7:51413"}; len(got) != 1 || !slices.Equal(got[0], want) {
		t.Fatalf("peers %q, want one row's %q", got, want)
	}
}
