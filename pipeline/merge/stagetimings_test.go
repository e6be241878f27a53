package merge

import (
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/schema"
)

// resultV2 is schema.Result as fetch wrote it before handshake_ms,
// extension_ms and verify_ms.
type resultV2 struct {
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
	LookupMs     *int64               `parquet:"lookup_ms,optional"`
	ConnectMs    *int64               `parquet:"connect_ms,optional"`
	MetadataMs   *int64               `parquet:"metadata_ms,optional"`
	TotalMs      *int64               `parquet:"total_ms,optional"`
	ServedBy     string               `parquet:"served_by,optional"`
	MetadataSize int64                `parquet:"metadata_size,optional"`
	schema.ResultMeta
}

var stagePartColumns = []string{"handshake_ms", "extension_ms", "verify_ms"}

// laterColumns are schema.Result's columns resultV2 lacks: the stage
// parts and retry_after (peers_penalised's, added after them).
var laterColumns = append(slices.Clone(stagePartColumns), "retry_after")

// TestMergeReadsResultsWithAndWithoutStageParts: one merge applies a
// results file of the previous fetch (no handshake_ms, extension_ms nor
// verify_ms: read as null) beside one of the current fetch (their values
// read as written), in Parquet and in Arrow.
func TestMergeReadsResultsWithAndWithoutStageParts(t *testing.T) {
	old, cur := parquet.SchemaOf(resultV2{}), parquet.SchemaOf(schema.Result{})
	for _, c := range laterColumns {
		if topField(old, c) != nil {
			t.Fatalf("resultV2 has %s", c)
		}
		if n := topField(cur, c); n == nil || !n.Optional() {
			t.Fatalf("schema.Result's %s is not an optional column", c)
		}
	}
	if len(old.Fields())+len(laterColumns) != len(cur.Fields()) {
		t.Fatalf("resultV2 has %d columns, schema.Result %d: want all but the %d new ones", len(old.Fields()), len(cur.Fields()), len(laterColumns))
	}
	info, h1 := torrentInfo("parts")
	h2 := hashAt(2, 1)
	m, err := infodict.Parse(info)
	if err != nil {
		t.Fatal(err)
	}
	at := t0 + hour + minute
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h1, t0), newHash(h2, t0)})
			jobs := planJobs(t, dir, t0+hour, 10)
			if len(jobs) != 2 {
				t.Fatalf("planned %d jobs, want 2", len(jobs))
			}
			var ok schema.Result
			var failed resultV2
			for _, j := range jobs {
				if j.InfoHash == h1 {
					ok = schema.Result{InfoHash: h1, HashType: schema.HashV1, Attempt: j.Attempt, LeaseID: j.LeaseID,
						AttemptedAt: at, Outcome: schema.OutcomeOK, PeersFound: 1, PeersTried: 1, PeerFailures: []schema.PeerFailure{},
						ConnectMs: new(int64(5)), HandshakeMs: new(int64(2)), ExtensionMs: new(int64(3)), MetadataMs: new(int64(40)),
						VerifyMs: new(int64(1)), TotalMs: new(int64(60)), ServedBy: "127.0.0.1:2", MetadataSize: int64(len(info)),
						ResultMeta: schema.OKMeta(m)}
				} else {
					failed = resultV2{InfoHash: j.InfoHash, HashType: schema.HashV1, Attempt: j.Attempt, LeaseID: j.LeaseID,
						AttemptedAt: at, Outcome: schema.OutcomeNoPeers, Detail: "none", PeerFailures: []schema.PeerFailure{},
						LookupMs: new(int64(7)), TotalMs: new(int64(9))}
				}
			}
			oldPath, curPath := writeOld(t, format, []resultV2{failed}), writeOld(t, format, []schema.Result{ok})
			for _, tt := range []struct {
				path string
				want []*int64 // handshake_ms, extension_ms, verify_ms
			}{{oldPath, []*int64{nil, nil, nil}}, {curPath, []*int64{ok.HandshakeMs, ok.ExtensionMs, ok.VerifyMs}}} {
				got, _, err := readResults(input{name: "IN", path: tt.path}, nil)
				if err != nil || len(got) != 1 {
					t.Fatalf("%s: %d rows, %v; want 1", tt.path, len(got), err)
				}
				r := got[0]
				for i, cell := range []*int64{r.HandshakeMs, r.ExtensionMs, r.VerifyMs} {
					if w := tt.want[i]; (cell == nil) != (w == nil) || (cell != nil && *cell != *w) {
						t.Errorf("%s: %s read as %s, want %s", r.Outcome, stagePartColumns[i], msOf(cell), msOf(w))
					}
				}
				if r.TotalMs == nil || (r.Outcome == schema.OutcomeNoPeers && (r.LookupMs == nil || *r.LookupMs != 7)) {
					t.Errorf("%s: lookup_ms %s, total_ms %s: the older columns not read", r.Outcome, msOf(r.LookupMs), msOf(r.TotalMs))
				}
			}
			st := runMerge(t, dir, t0+2*hour, oldPath, curPath)
			if st.Results != 2 || st.Stored != 1 || st.Applied != 1 {
				t.Fatalf("results %d, ok stored %d, failures applied %d; want 2, 1, 1", st.Results, st.Stored, st.Applied)
			}
			if tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents); len(tor) != 1 || tor[0].FetchedAt != at+60 {
				t.Fatalf("torrents %+v, want %x's fetched at attempted_at + total_ms", tor, h1[:4])
			}
			if s := stateOf(t, dir)[h2]; s.MetadataStatus != schema.StatusFailed || s.LastFailure != schema.OutcomeNoPeers {
				t.Errorf("failed hash: status %s, last_failure %s; want failed, no_peers", s.MetadataStatus, s.LastFailure)
			}
		})
	}
}

// msOf renders a timing cell, NULL for nil.
func msOf(ms *int64) string {
	if ms == nil {
		return "NULL"
	}
	return strconv.FormatInt(*ms, 10)
}
