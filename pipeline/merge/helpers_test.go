package merge

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/plan"
)

const (
	minute = int64(60 * 1000)
	hour   = 60 * minute
	day    = 24 * hour
)

var t0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

func tm(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// torrentInfo returns a small bencoded info dictionary named name and its
// v1 infohash.
func torrentInfo(name string) ([]byte, schema.Hash) {
	info := []byte(fmt.Sprintf("d6:lengthi42e4:name%d:%s12:piece lengthi16384e6:pieces20:%se", len(name), name, bytes.Repeat([]byte{'x'}, 20)))
	return info, sha1.Sum(info)
}

// v2TorrentInfo returns a small BEP 52 (v2-only) info dictionary named
// name, of one file of 42 bytes: its SHA-256 is its infohash.
func v2TorrentInfo(name string) []byte {
	return []byte(fmt.Sprintf("d9:file treed%d:%sd0:d6:lengthi42e11:pieces root32:%seee12:meta versioni2e4:name%d:%s12:piece lengthi16384ee",
		len(name), name, bytes.Repeat([]byte{'r'}, 32), len(name), name))
}

func hashAt(prefix byte, n uint64) schema.Hash {
	var h schema.Hash
	h[0] = prefix
	binary.BigEndian.PutUint64(h[12:], n)
	return h
}

func newHash(h schema.Hash, seen int64) schema.State {
	return schema.State{InfoHash: h, HashType: schema.HashV1, FirstSeen: seen, LastSeen: seen, SeenCount: 1,
		LastSource: schema.SourceGetPeers, Activity: 1, MetadataStatus: schema.StatusNew, Tier: schema.TierHot}
}

// makeDataset commits states (hot files only) into a new dataset.
func makeDataset(t *testing.T, states []schema.State) string {
	t.Helper()
	dir := t.TempDir()
	datasettest.CommitStateFiles(t, dir, datasettest.HotFiles(states))
	return dir
}

// planJobs runs plan-retries at now.
func planJobs(t *testing.T, dir string, now int64, limit int) []schema.Job {
	t.Helper()
	o := plan.DefaultOptions()
	o.Data, o.Now, o.Limit = dir, tm(now), limit
	o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
	if _, err := plan.Run(context.Background(), o); err != nil {
		t.Fatalf("plan-retries: %v", err)
	}
	return readAll[schema.Job](t, o.Output)
}

// writeResults writes results to a new Parquet file.
func writeResults(t *testing.T, rs []schema.Result) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.parquet")
	w, err := rowio.Create[schema.Result](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// runMerge merges the inputs at now.
func runMerge(t *testing.T, dir string, now int64, inputs ...string) Stats {
	t.Helper()
	st, err := tryMerge(dir, now, inputs...)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	return st
}

// runMergeStdin merges input at now, stdin holding what "-" reads.
func runMergeStdin(t *testing.T, dir string, now int64, input string, stdin []byte) Stats {
	t.Helper()
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs = dir, tm(now), []string{input}
	o.Stdin = bytes.NewReader(stdin)
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func tryMerge(dir string, now int64, inputs ...string) (Stats, error) {
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs = dir, tm(now), inputs
	return Run(context.Background(), o)
}

// failure is the result of job j failing with class at.
func failure(j schema.Job, class string, at int64, peers ...schema.PeerFailure) schema.Result {
	return schema.Result{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt, LeaseID: j.LeaseID,
		AttemptedAt: at, Outcome: class, PeerFailures: peers}
}

// success is the ok result of job j, serving info.
func success(j schema.Job, info []byte, at int64) schema.Result {
	return schema.Result{InfoHash: j.InfoHash, HashType: schema.HashV1, Attempt: j.Attempt, LeaseID: j.LeaseID,
		AttemptedAt: at, Outcome: schema.OutcomeOK, ServedBy: "127.0.0.1:6881", TotalMs: new(int64(1500)),
		ResultMeta: schema.OKMeta(schema.Meta{Name: new("x"), NameRaw: []byte("x"), NameUTF8Valid: true, InfoBytes: info})}
}

func readAll[T any](t *testing.T, path string) []T {
	t.Helper()
	r, err := rowio.Open[T](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []T
	buf := make([]T, 256)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readTable reads every row of a table through its current glob, as a
// DuckDB user would.
func readTable[T any](t *testing.T, dir, table string) []T {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, table, "current", "prefix=*", "*.parquet"))
	more, _ := filepath.Glob(filepath.Join(dir, table, "current", "*.parquet"))
	var out []T
	for _, f := range append(files, more...) {
		datasettest.CheckExactStatistics(t, f)
		rows, err := dataset.ReadFile[T](f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
	}
	return out
}

func stateOf(t *testing.T, dir string) map[schema.Hash]schema.State {
	t.Helper()
	m := map[schema.Hash]schema.State{}
	for _, st := range readTable[schema.State](t, dir, dataset.TableState) {
		if _, dup := m[st.InfoHash]; dup {
			t.Fatalf("%x appears twice in the state", st.InfoHash)
		}
		m[st.InfoHash] = st
	}
	return m
}

// readResults reads every result of in as the run does (readResultsTo).
func readResults(in input, sp *metaSpill) ([]result, *rowio.CutError, error) {
	var rs []result
	_, cut, err := readResultsTo(in, sp, nil, func(r *result) { rs = append(rs, *r) })
	if err != nil {
		return nil, nil, err
	}
	return rs, cut, nil
}

// resultStream is an Arrow IPC stream of rs, as fetch -o - writes it.
func resultStream(t *testing.T, rs []schema.Result) []byte {
	t.Helper()
	var stream bytes.Buffer
	w := rowio.NewArrowWriter[schema.Result]("stdin", &stream)
	if err := w.Write(rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return stream.Bytes()
}

// wantStdinSetAside fails the test unless merge refused its stdin: err
// is bad input (exit 2) on one line starting with want and saying where
// stdin was set aside, dir's inbox holds it as its one .results.bad
// file, and dir's snapshot is still before.
func wantStdinSetAside(t *testing.T, dir string, before int64, err error, want string) {
	t.Helper()
	if exitcode.Of(err) != exitcode.Usage || !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), "(set aside as ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v\nwant bad input, one line starting %q, set aside", err, want)
	}
	ents, _ := os.ReadDir(dir + "/" + inboxDir)
	if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".results.bad") {
		t.Fatalf("inbox holds %v, want the input set aside", ents)
	}
	if datasettest.Snapshot(t, dir) != before {
		t.Fatal("a refused stdin committed")
	}
}
