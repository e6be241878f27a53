package plan

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

const (
	minute = int64(60 * 1000)
	hour   = 60 * minute
	day    = 24 * hour
)

var t0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

func ms(t time.Time) int64 { return t.UnixMilli() }

// hashAt returns a hash in partition prefix, numbered n.
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

func failedHash(t *testing.T, h schema.Hash, seen, failedAt int64) schema.State {
	t.Helper()
	st := newHash(h, seen)
	if err := schedule.ApplyFailure(schedule.Default(), &st, schema.OutcomeNoPeers, failedAt, false); err != nil {
		t.Fatal(err)
	}
	return st
}

// makeDataset writes states (hot ones, and cold ones into cold files) as
// one commit of a new dataset and returns its directory.
func makeDataset(t testing.TB, states []schema.State, leaseRows []schema.Lease) string {
	t.Helper()
	dir := t.TempDir()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	writeStates(t, d, states, leaseRows)
	datasettest.SetDatasetID(t, dir, testDatasetID) // jobs' lease IDs name it: the same in every run
	return dir
}

// testDatasetID names the datasets makeDataset makes.
const testDatasetID = "00000000000000d1"

func writeStates(t testing.TB, d *dataset.Dataset, states []schema.State, leaseRows []schema.Lease) {
	t.Helper()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	parts := map[byte][]schema.State{}
	for _, st := range states {
		parts[st.InfoHash[0]] = append(parts[st.InfoHash[0]], st)
	}
	for p, rows := range parts {
		slices.SortFunc(rows, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
		key := fmt.Sprintf("%02x", p)
		var hot, cold []schema.State
		for _, r := range rows {
			if r.Tier == schema.TierCold {
				cold = append(cold, r)
			} else {
				hot = append(hot, r)
			}
		}
		var files []dataset.FileInfo
		if len(hot) > 0 {
			fi, err := dataset.WriteStaged(tx, dataset.TableState, key, hot)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, fi)
		}
		if len(cold) > 0 {
			fi := writeCold(t, tx, key, cold)
			files = append(files, fi)
		}
		tx.SetPartition(dataset.TableState, key, files)
	}
	if leaseRows != nil {
		ls := leases.Set{}
		for _, l := range leaseRows {
			ls[l.InfoHash] = l
		}
		if err := leases.Write(tx, ls); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

func writeCold(t testing.TB, tx *dataset.Tx, key string, rows []schema.State) dataset.FileInfo {
	t.Helper()
	name := schedule.ColdFileName()
	p, err := tx.StagePath(dataset.TableState, key, name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := rowio.Create[schema.State](p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := tx.Stage(dataset.TableState, key, name, int64(len(rows)))
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// runPlan plans at now with limit into a file and returns the jobs.
func runPlan(t *testing.T, dir string, now int64, limit int, edit func(o *Options)) ([]schema.Job, Stats) {
	t.Helper()
	o := DefaultOptions()
	o.Data, o.Now, o.Limit = dir, time.UnixMilli(now).UTC(), limit
	o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
	if edit != nil {
		edit(&o)
	}
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("plan-retries: %v", err)
	}
	return readJobs(t, o.Output), st
}

func readJobs(t *testing.T, path string) []schema.Job {
	t.Helper()
	r, err := rowio.Open[schema.Job](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []schema.Job
	buf := make([]schema.Job, 256)
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

func jobSet(jobs []schema.Job) map[schema.Hash]schema.Job {
	m := map[schema.Hash]schema.Job{}
	for _, j := range jobs {
		m[j.InfoHash] = j
	}
	return m
}
