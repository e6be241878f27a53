package merge

import (
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/schema"
)

// resultV1 is schema.Result as fetch wrote it before its timings were
// nullable: lookup_ms, connect_ms, metadata_ms and total_ms required
// INT64, 0 where a stage did not run.
type resultV1 struct {
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
	schema.ResultMeta
}

var timingColumns = []string{"lookup_ms", "connect_ms", "metadata_ms", "total_ms"}

// TestMergeReadsResultsWithRequiredTimings: a results file of the shape
// the previous fetch wrote (Parquet or Arrow; required INT64 timings, 0
// for a stage that did not run) is still read, its timings as the values
// stored (0 included, not null), and applied: the ok row's torrent is
// stored with fetched_at = attempted_at + total_ms, the failure counts.
func TestMergeReadsResultsWithRequiredTimings(t *testing.T) {
	old, cur := parquet.SchemaOf(resultV1{}), parquet.SchemaOf(schema.Result{})
	for _, c := range timingColumns {
		if n := topField(old, c); n == nil || n.Optional() {
			t.Fatalf("resultV1's %s is not a required column", c)
		}
		if n := topField(cur, c); n == nil || !n.Optional() {
			t.Fatalf("schema.Result's %s is not an optional column", c)
		}
	}
	info, h1 := torrentInfo("timed")
	h2 := hashAt(2, 1)
	m, err := infodict.Parse(info)
	if err != nil {
		t.Fatal(err)
	}
	at := t0 + hour + minute
	// lookup_ms, connect_ms, metadata_ms, total_ms as the old fetch wrote them.
	timings := map[schema.Hash][4]int64{h1: {4, 0, 6, 1500}, h2: {3, 0, 0, 9}}
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h1, t0), newHash(h2, t0)})
			var rows []resultV1
			for _, j := range planJobs(t, dir, t0+hour, 10) {
				ms := timings[j.InfoHash]
				r := resultV1{InfoHash: j.InfoHash, HashType: schema.HashV1, Attempt: j.Attempt, LeaseID: j.LeaseID,
					AttemptedAt: at, Outcome: schema.OutcomeNoPeers, Detail: "none", PeerFailures: []schema.PeerFailure{},
					LookupMs: ms[0], ConnectMs: ms[1], MetadataMs: ms[2], TotalMs: ms[3]}
				if j.InfoHash == h1 {
					r.Outcome, r.Detail, r.ServedBy, r.MetadataSize = schema.OutcomeOK, "", "127.0.0.1:2", int64(len(info))
					r.PeersFound, r.PeersTried, r.ResultMeta = 1, 1, schema.OKMeta(m)
				}
				rows = append(rows, r)
			}
			if len(rows) != 2 {
				t.Fatalf("planned %d jobs, want 2", len(rows))
			}
			path := writeOld(t, format, rows)
			got, _, err := readResults(input{name: "IN", path: path}, nil)
			if err != nil {
				t.Fatalf("merge cannot read the previous fetch's results: %v", err)
			}
			for _, r := range got {
				cells := []*int64{r.LookupMs, r.ConnectMs, r.MetadataMs, r.TotalMs}
				for i, c := range timingColumns {
					if want := timings[r.InfoHash][i]; cells[i] == nil {
						t.Errorf("%s: %s read as NULL, want %d", r.Outcome, c, want)
					} else if *cells[i] != want {
						t.Errorf("%s: %s read as %d, want %d", r.Outcome, c, *cells[i], want)
					}
				}
			}
			st := runMerge(t, dir, t0+2*hour, path)
			if st.Results != 2 || st.Stored != 1 || st.Applied != 1 {
				t.Fatalf("results %d, ok stored %d, failures applied %d; want 2, 1, 1", st.Results, st.Stored, st.Applied)
			}
			tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
			if len(tor) != 1 || tor[0].InfoHash != h1 {
				t.Fatalf("%d torrents, want %x's alone", len(tor), h1[:4])
			}
			if tor[0].FetchedAt != at+1500 {
				t.Errorf("fetched_at %d, want attempted_at + total_ms = %d", tor[0].FetchedAt, at+1500)
			}
			if s := stateOf(t, dir)[h2]; s.MetadataStatus != schema.StatusFailed || s.LastFailure != schema.OutcomeNoPeers {
				t.Errorf("failed hash: status %s, last_failure %s; want failed, no_peers", s.MetadataStatus, s.LastFailure)
			}
		})
	}
}
