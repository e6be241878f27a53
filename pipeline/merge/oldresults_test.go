package merge

import (
	"bytes"
	"crypto/sha1"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/anacrolix/torrent/bencode"
	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// resultV0 is schema.Result as fetch wrote it before a result's metadata
// columns were all nullable: schema.Meta embedded, whose name_utf8_valid
// and private are required booleans and files a required list, so that
// every failure held false, false and [] there.
type resultV0 struct {
	InfoHash     schema.Hash          `parquet:"info_hash"`
	InfoHashV2   []byte               `parquet:"info_hash_v2,optional"`
	HashType     int8                 `parquet:"hash_type,int(8)"`
	Attempt      int32                `parquet:"attempt"`
	LeaseID      string               `parquet:"lease_id,optional"`
	AttemptedAt  int64                `parquet:"attempted_at,timestamp(millisecond)"`
	Outcome      string               `parquet:"outcome,dict"`
	Detail       string               `parquet:"detail,optional"`
	PeersFound   int32                `parquet:"peers_found"`
	PeersTried   int32                `parquet:"peers_tried"`
	PeerFailures []schema.PeerFailure `parquet:"peer_failures,list"`
	LookupMs     int64                `parquet:"lookup_ms"`
	ConnectMs    int64                `parquet:"connect_ms"`
	MetadataMs   int64                `parquet:"metadata_ms"`
	TotalMs      int64                `parquet:"total_ms"`
	ServedBy     string               `parquet:"served_by,optional"`
	MetadataSize int64                `parquet:"metadata_size,optional"`
	schema.Meta
}

// writeOld writes rows (of an older fetch's result type) in format
// (parquet, or an Arrow IPC stream) as that fetch did.
func writeOld[T any](t *testing.T, format string, rows []T) string {
	t.Helper()
	var stream bytes.Buffer
	path := filepath.Join(t.TempDir(), "results."+format)
	out := path
	if format == "arrow" {
		out = "-"
	}
	w, err := rowio.Create[T](out, &stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if format == "arrow" {
		if err := os.WriteFile(path, stream.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestMergeReadsOlderResults: a results file of the shape fetch wrote
// before (Parquet or Arrow; required name_utf8_valid, private and files,
// false, false and [] on failures) is still applied: its ok rows are
// stored as their info_bytes say, without a warning that their columns
// disagree, and its failures count as failures.
func TestMergeReadsOlderResults(t *testing.T) {
	old := parquet.SchemaOf(resultV0{})
	for _, c := range []string{"name_utf8_valid", "private", "files"} {
		if n := topField(old, c); n == nil || n.Optional() {
			t.Fatalf("resultV0's %s is not a required column", c)
		}
	}
	withFiles, h1 := torrentInfo("old")
	noFiles := bencode.MustMarshal(map[string]any{"name": "none", "files": []any{}, "piece length": 16384, "pieces": ""})
	h2 := schema.Hash(sha1.Sum(noFiles))
	h3, h4 := hashAt(3, 1), hashAt(4, 1)
	infos := map[schema.Hash][]byte{h1: withFiles, h2: noFiles}
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h1, t0), newHash(h2, t0), newHash(h3, t0), newHash(h4, t0)})
			var rows []resultV0
			for _, j := range planJobs(t, dir, t0+hour, 10) {
				r := resultV0{InfoHash: j.InfoHash, HashType: schema.HashV1, Attempt: j.Attempt, LeaseID: j.LeaseID,
					AttemptedAt: t0 + hour + minute, Outcome: schema.OutcomeNoPeers, Detail: "none", PeerFailures: []schema.PeerFailure{}}
				if j.InfoHash == h4 {
					r.Outcome, r.Detail = schema.OutcomeRejected, "127.0.0.1:1: rejected"
					r.PeerFailures = []schema.PeerFailure{{Addr: "127.0.0.1:1", Class: schema.OutcomeRejected, At: r.AttemptedAt}}
				}
				if info := infos[j.InfoHash]; info != nil {
					m, err := infodict.Parse(info)
					if err != nil {
						t.Fatal(err)
					}
					r.Outcome, r.Detail, r.ServedBy, r.MetadataSize, r.Meta = schema.OutcomeOK, "", "127.0.0.1:2", int64(len(info)), m
				}
				rows = append(rows, r)
			}
			if len(rows) != 4 {
				t.Fatalf("planned %d jobs, want 4", len(rows))
			}
			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
			st := runMerge(t, dir, t0+2*hour, writeOld(t, format, rows))
			if st.Results != 4 || st.Stored != 2 || st.Applied != 2 {
				t.Fatalf("results %d, ok stored %d, failures applied %d; want 4, 2, 2", st.Results, st.Stored, st.Applied)
			}
			if bytes.Contains(log.Bytes(), []byte("disagree")) {
				t.Errorf("merge warned about rows as fetch wrote them:\n%s", log.String())
			}
			tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
			if len(tor) != 2 {
				t.Fatalf("%d torrents, want 2", len(tor))
			}
			for _, r := range tor {
				want, _ := infodict.Parse(infos[r.InfoHash])
				if r.NameOr() != want.NameOr() || len(r.Files) != len(want.Files) || *r.FileCount != *want.FileCount || !bytes.Equal(r.InfoBytes, want.InfoBytes) {
					t.Errorf("%x: stored name %q, %d files (file_count %d), want %q, %d", r.InfoHash[:4], r.NameOr(), len(r.Files),
						*r.FileCount, want.NameOr(), len(want.Files))
				}
			}
			for _, s := range readTable[schema.State](t, dir, dataset.TableState) {
				want := schema.StatusFailed
				if infos[s.InfoHash] != nil {
					want = schema.StatusFetched
				}
				if s.MetadataStatus != want {
					t.Errorf("%x: metadata_status %s, want %s", s.InfoHash[:4], s.MetadataStatus, want)
				}
			}
		})
	}
}

// topField is the top-level field of s named name (a list's group, which
// holds whether the list is optional), or nil.
func topField(s *parquet.Schema, name string) parquet.Node {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return f
		}
	}
	return nil
}
