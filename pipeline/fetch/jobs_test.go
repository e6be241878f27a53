package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/merge"
	"github.com/infohash/infohash/tools/badpeers"
)

// duckJob is a job as DuckDB writes one: info_hash a BLOB (BYTE_ARRAY),
// every column optional.
type duckJob struct {
	InfoHash []byte `parquet:"info_hash,optional"`
	HashType int8   `parquet:"hash_type,optional,int(8)"`
	LeaseID  string `parquet:"lease_id,optional"`
}

// requiredBlobJob has a required BYTE_ARRAY info_hash.
type requiredBlobJob struct {
	InfoHash []byte `parquet:"info_hash"`
}

func readAllJobs(t *testing.T, path string) ([]jobRow, int64, error) {
	t.Helper()
	r, err := openJobs(path, nil, "")
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	var out []jobRow
	buf := make([]jobRow, 2) // several reads: row numbers must add up
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, r.total, nil
		}
		if err != nil {
			return out, r.total, err
		}
	}
}

// TestOpenJobsLayouts: fetch reads info_hash as infohash writes it
// (FIXED_LEN_BYTE_ARRAY(20)) and as DuckDB does (BYTE_ARRAY, optional),
// and names the file and row of a hash of the wrong length.
func TestOpenJobsLayouts(t *testing.T) {
	h1, h2 := schema.Hash{1, 2, 3}, schema.Hash{4, 5, 6}
	v2 := bytes.Repeat([]byte{7}, 32)
	tests := []struct {
		name    string
		write   func(t *testing.T, path string)
		want    []schema.Hash
		types   []int8
		wantErr string
		v2s     [][]byte // the jobs' full v2 hashes, when checked
	}{
		{"fixed", func(t *testing.T, p string) {
			writeRows(t, p, []schema.Job{{InfoHash: h1, HashType: 1}, {InfoHash: h2, HashType: 1}})
		}, []schema.Hash{h1, h2}, []int8{1, 1}, "", [][]byte{nil, nil}},
		{"fixed with info_hash_v2", func(t *testing.T, p string) {
			writeRows(t, p, []schema.Job{{InfoHash: schema.Hash(v2[:20]), InfoHashV2: v2, HashType: 2}, {InfoHash: h2, HashType: 1}})
		}, []schema.Hash{schema.Hash(v2[:20]), h2}, []int8{2, 1}, "", [][]byte{v2, nil}},
		{"text list with a v2 hash", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(schema.Hex(h1)+"\n"+hex.EncodeToString(v2)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []schema.Hash{h1, schema.Hash(v2[:20])}, []int8{1, 2}, "", [][]byte{nil, v2}},
		{"duckdb blob", func(t *testing.T, p string) {
			writeRows(t, p, []duckJob{{InfoHash: h1[:], LeaseID: "a"}, {InfoHash: h2[:], HashType: 1}, {InfoHash: h1[:]}})
		}, []schema.Hash{h1, h2, h1}, []int8{0, 1, 0}, "", nil},
		{"required blob", func(t *testing.T, p string) {
			writeRows(t, p, []requiredBlobJob{{h2[:]}})
		}, []schema.Hash{h2}, []int8{0}, "", nil},
		{"blob v2", func(t *testing.T, p string) {
			writeRows(t, p, []duckJob{{InfoHash: v2, HashType: 1}})
		}, []schema.Hash{schema.Hash(v2[:20])}, []int8{schema.HashV2}, "", [][]byte{v2}},
		{"blob too short", func(t *testing.T, p string) {
			writeRows(t, p, []duckJob{{InfoHash: h1[:]}, {InfoHash: h1[:]}, {InfoHash: h1[:]}, {InfoHash: h2[:19]}})
		}, nil, nil, "row 4: info_hash has 19 bytes, want 20", nil},
		{"blob null", func(t *testing.T, p string) {
			writeRows(t, p, []duckJob{{InfoHash: h1[:]}, {LeaseID: "x"}})
		}, nil, nil, "row 2: info_hash has 0 bytes", nil},
		{"no info_hash", func(t *testing.T, p string) {
			writeRows(t, p, []struct {
				X int32 `parquet:"x"`
			}{{1}})
		}, nil, nil, "info_hash", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "jobs.parquet")
			tt.write(t, p)
			rows, total, err := readAllJobs(t, p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), p) {
					t.Fatalf("err %v, want one naming %s and %q", err, p, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (total >= 0 && total != int64(len(tt.want))) || len(rows) != len(tt.want) { // a text list: total -1
				t.Fatalf("%d rows (total %d), want %d", len(rows), total, len(tt.want))
			}
			for i, r := range rows {
				if r.InfoHash != tt.want[i] || r.HashType != tt.types[i] {
					t.Errorf("row %d: %x type %d, want %x type %d", i, r.InfoHash, r.HashType, tt.want[i], tt.types[i])
				}
				if tt.v2s != nil && !bytes.Equal(r.job().InfoHashV2, tt.v2s[i]) {
					t.Errorf("row %d: info_hash_v2 %x, want %x", i, r.job().InfoHashV2, tt.v2s[i])
				}
			}
		})
	}
}

// TestRunDuckDBJobs: a DuckDB-written jobs file is fetched like fetch's
// own; one with a short hash is bad input naming the row, with no output.
func TestRunDuckDBJobs(t *testing.T) {
	tor := badpeers.NewTorrent(15, 1, 5)
	good := startPeer(t, badpeers.Good, tor)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "duck.parquet"), filepath.Join(dir, "out.parquet")
	writeRows(t, in, []duckJob{{InfoHash: tor.InfoHash[:], LeaseID: "d"}})
	o := testOptions()
	o.Input, o.Output, o.Peers = in, out, []string{good.Addr()}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if r := readResults(t, out)[tor.InfoHash]; r.Outcome != schema.OutcomeOK || r.LeaseID != "d" {
		t.Fatalf("result %s %q", r.Outcome, r.LeaseID)
	}

	bad, badOut := filepath.Join(dir, "short.parquet"), filepath.Join(dir, "never.parquet")
	writeRows(t, bad, []duckJob{{InfoHash: tor.InfoHash[:]}, {InfoHash: tor.InfoHash[:10]}})
	o.Input, o.Output = bad, badOut
	_, err := Run(context.Background(), o)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), bad+": row 2: info_hash has 10 bytes") {
		t.Fatalf("err %v (exit %d), want bad input naming %s row 2", err, exitcode.Of(err), bad)
	}
	if _, serr := os.Stat(badOut); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("output exists after bad input: %v", serr)
	}
}

// arrowJob is a job as another tool may stream one: info_hash any binary,
// here a v2 hash's full 32 bytes.
type arrowJob struct {
	InfoHash []byte `parquet:"info_hash"`
	HashType int8   `parquet:"hash_type,optional,int(8)"`
}

// arrowJobs is an Arrow IPC stream of jobs.
func arrowJobs[T any](t *testing.T, rows []T) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	w := rowio.NewArrowWriter[T]("stdin", &b)
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &b
}

// TestRunArrowV2Jobs: an Arrow stream's 32-byte info_hash is a full v2
// hash, as in a DuckDB Parquet file: fetch keys the job by its first 20
// bytes, the truth, and verifies against them; the full 32 are a claim,
// which metadata whose SHA-256 differs in the last 12 bytes refutes (ok,
// with the proven full hash; it was hash_mismatch, blamed on the good
// peer). A hash of another length is bad input naming the row.
func TestRunArrowV2Jobs(t *testing.T) {
	tor := badpeers.NewHybridTorrent(16, 2, 10) // its SHA-256 is its v2 infohash
	sum := sha256.Sum256(tor.Info)
	v2 := badpeers.Torrent{Info: tor.Info, Name: tor.Name}
	copy(v2.InfoHash[:], sum[:20])
	good := startPeer(t, badpeers.Good, v2)
	other := append(sum[:20:20], bytes.Repeat([]byte{0xee}, 12)...)
	for _, tt := range []struct {
		name    string
		job     arrowJob
		want    string
		wantV2  []byte
		wantErr string
	}{
		{"full v2 hash matches", arrowJob{InfoHash: sum[:], HashType: schema.HashV1}, schema.OutcomeOK, sum[:], ""},
		{"last 12 bytes differ", arrowJob{InfoHash: other}, schema.OutcomeOK, sum[:], ""},
		{"20-byte hash", arrowJob{InfoHash: sum[:20]}, schema.OutcomeOK, sum[:], ""},
		{"21-byte hash", arrowJob{InfoHash: sum[:21]}, "", nil, "stdin: row 1: info_hash has 21 bytes, want 20 (or 32 for v2)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.parquet")
			o := testOptions()
			o.Input, o.Stdin, o.Output, o.Peers = "-", arrowJobs(t, []arrowJob{tt.job}), out, []string{good.Addr()}
			_, err := Run(context.Background(), o)
			if tt.wantErr != "" {
				if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v (exit %d), want bad input %q", err, exitcode.Of(err), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, ok := readResults(t, out)[v2.InfoHash]
			if !ok || r.Outcome != tt.want || !bytes.Equal(r.InfoHashV2, tt.wantV2) {
				t.Fatalf("result %s (%s), info_hash_v2 %x; want %s, %x", r.Outcome, r.Detail, r.InfoHashV2, tt.want, tt.wantV2)
			}
			if r.Outcome == schema.OutcomeOK && r.HashType != schema.HashV2 {
				t.Errorf("hash_type %d, want v2", r.HashType)
			}
		})
	}
}

// typedJob is a job file with a v1 hash and an optional hash_type, and no
// peers or avoid_peers column.
type typedJob struct {
	InfoHash schema.Hash `parquet:"info_hash"`
	HashType int8        `parquet:"hash_type,optional,int(8)"`
}

// TestRunJobsWithoutPeerColumns: a jobs file without peers and
// avoid_peers columns gives jobs without peers, whatever its other
// columns hold (parquet-go read the missing lists as [""] in a row with a
// hash_type): with no peer anywhere (its DHT, one loopback node, knows
// none) the attempt is no_peers, not rejected as if every peer found were
// penalised.
func TestRunJobsWithoutPeerColumns(t *testing.T) {
	h1, h2 := schema.Hash{0x72, 1}, schema.Hash{0x72, 2}
	for _, tt := range []struct {
		name  string
		write func(t *testing.T, path string)
	}{
		{"duckdb blob", func(t *testing.T, p string) {
			writeRows(t, p, []duckJob{{InfoHash: h1[:]}, {InfoHash: h2[:], HashType: schema.HashV1}})
		}},
		{"fixed", func(t *testing.T, p string) {
			writeRows(t, p, []typedJob{{InfoHash: h1}, {InfoHash: h2, HashType: schema.HashV1}})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
			tt.write(t, in)
			rows, _, err := readAllJobs(t, in)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rows {
				if len(r.Peers) != 0 || len(r.AvoidPeers) != 0 {
					t.Errorf("row %d: peers %q, avoid_peers %q; want none", i, r.Peers, r.AvoidPeers)
				}
			}
			o := testOptions()
			o.Input, o.Output = in, out
			o.Bootstrap = []string{startSlowNode(t, 0, nil, nil)}
			if _, err := Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			for h, r := range readResults(t, out) {
				if r.Outcome != schema.OutcomeNoPeers || len(r.PeerFailures) != 0 {
					t.Errorf("%x: %s (%s), peer_failures %+v; want no_peers", h, r.Outcome, r.Detail, r.PeerFailures)
				}
			}
		})
	}
}

// TestRunJobPeers: a job's peers must be endpoints as --peer takes them
// and merge records them (HOST:PORT, port 1-65535, no space or newline):
// fetch dials those and merge takes the peer_failures it writes; any
// other entry is bad input naming the file, the row (counted from 0) and
// the entry, and nothing is written, as for a bad info_hash.
func TestRunJobPeers(t *testing.T) {
	refusing := refusedAddr(t)
	const why = " is not a peer endpoint (HOST:PORT, port 1-65535, UTF-8, no space)"
	for _, tt := range []struct {
		name    string
		peers   []string
		wantErr string // after "fetch: JOBS: "
	}{
		{"refusing peers", []string{refusing, "127.0.0.1:1"}, ""},
		{"not host:port", []string{refusing, "nonsense"}, `row 2: peers[1]: "nonsense"` + why},
		{"no port", []string{"127.0.0.1:"}, `row 2: peers[0]: "127.0.0.1:"` + why},
		{"port 0", []string{"127.0.0.1:0"}, `row 2: peers[0]: "127.0.0.1:0"` + why},
		{"port too big", []string{"127.0.0.1:65536"}, `row 2: peers[0]: "127.0.0.1:65536"` + why},
		{"port name", []string{"127.0.0.1:http"}, `row 2: peers[0]: "127.0.0.1:http"` + why},
		{"no host", []string{":6881"}, `row 2: peers[0]: ":6881"` + why},
		{"newline", []string{"127.0.0.1:1\n"}, `row 2: peers[0]: "127.0.0.1:1\n"` + why},
		{"not UTF-8", []string{"bad\xffhost:6881"}, `row 2: peers[0]: "bad\xffhost:6881"` + why},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
			writeRows(t, in, []schema.Job{{InfoHash: schema.Hash{0x71, 1}}, {InfoHash: schema.Hash{0x71, 2}, Peers: tt.peers}})
			o := testOptions()
			o.Input, o.Output = in, out
			st, err := Run(context.Background(), o)
			if tt.wantErr != "" {
				want := "fetch: " + in + ": " + tt.wantErr
				if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err %v (exit %d)\nwant %q (exit 2)", err, exitcode.Of(err), want)
				}
				if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
					t.Fatalf("output exists after bad input: %v", serr)
				}
				return
			}
			if err != nil || st.PeerFailures[schema.OutcomeConnectFailed] != int64(len(tt.peers)) {
				t.Fatalf("stats %+v, err %v", st, err)
			}
			mergeResults(t, out)
		})
	}
}

// TestRunJobLeaseIDUTF8: a job's lease_id is copied into its result's
// lease_id, a STRING column DuckDB refuses to read with other bytes in
// it: a lease_id that is not UTF-8 is bad input naming the row, and
// nothing is written.
func TestRunJobLeaseIDUTF8(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	writeRows(t, in, []schema.Job{{InfoHash: schema.Hash{0x72, 1}, LeaseID: "ok"}, {InfoHash: schema.Hash{0x72, 2}, LeaseID: "l\xffid"}})
	o := testOptions()
	o.Input, o.Output = in, out
	_, err := Run(context.Background(), o)
	want := "fetch: " + in + `: row 2: lease_id "l\xffid" is not valid UTF-8`
	if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("err %v (exit %d)\nwant %q (exit 2)", err, exitcode.Of(err), want)
	}
	if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("output exists after bad input: %v", serr)
	}
}

// refusedAddr is a loopback endpoint that refuses connections for the
// whole test: a badpeers Refuse peer, whose port is held. A listener's
// port freed at once could be taken by a listener started later (another
// test's peer), which would answer.
func refusedAddr(t *testing.T) string {
	t.Helper()
	return startPeer(t, badpeers.Refuse).Addr()
}

// mergeResults merges the results file path into a new dataset: merge
// must take what fetch writes.
func mergeResults(t *testing.T, path string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true}); err != nil {
		t.Fatal(err)
	}
	o := merge.DefaultOptions()
	o.Data, o.Inputs = dir, []string{path}
	if _, err := merge.Run(context.Background(), o); err != nil {
		t.Fatalf("merge refuses fetch's results: %v", err)
	}
}
