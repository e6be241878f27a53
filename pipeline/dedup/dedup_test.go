package dedup

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// genObs makes n observations over distinct hashes with repeats.
func genObs(seed uint64, n, distinct int) []schema.Observation {
	r := rand.New(rand.NewPCG(seed, 1))
	hs := make([]schema.Hash, distinct)
	for i := range hs {
		for j := range hs[i] {
			hs[i][j] = byte(r.UintN(256))
		}
	}
	srcs := []string{schema.SourceGetPeers, schema.SourceAnnouncePeer, schema.SourceSampleInfohashes}
	out := make([]schema.Observation, n)
	for i := range out {
		k := int(float64(distinct) * math.Pow(r.Float64(), 2)) // skewed repeats
		out[i] = schema.Observation{InfoHash: hs[k], HashType: schema.HashV1,
			ObservedAt: t0.UnixMilli() + int64(r.IntN(3_600_000)), Source: srcs[r.IntN(3)], RunID: "t"}
	}
	return out
}

func writeObs(t testing.TB, dir string, obs []schema.Observation) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("obs-%d.parquet", rand.Int()))
	w, err := rowio.Create[schema.Observation](p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(obs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, data string, mod func(*Options), inputs ...string) (Stats, error) {
	t.Helper()
	o := DefaultOptions()
	o.Data, o.Inputs, o.Now = data, inputs, t0.Add(2*time.Hour)
	if mod != nil {
		mod(&o)
	}
	return Run(context.Background(), o)
}

// readState returns the committed state keyed by hash.
func readState(t *testing.T, data string) map[schema.Hash]schema.State {
	t.Helper()
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := d.Current()
	tb := m.Table(dataset.TableState)
	out := map[schema.Hash]schema.State{}
	for _, key := range tb.PartitionKeys() {
		rows, err := dataset.ReadPartition[schema.State](d, tb, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if _, dup := out[r.InfoHash]; dup {
				t.Fatalf("hash %x twice in state", r.InfoHash)
			}
			if fmt.Sprintf("%02x", r.InfoHash[0]) != key {
				t.Fatalf("hash %x in partition %s", r.InfoHash, key)
			}
			out[r.InfoHash] = r
		}
		for _, f := range tb.Partitions[key] {
			datasettest.CheckExactStatistics(t, d.FilePath(tb, key, f))
			rows, _ := dataset.ReadFile[hashOnly](d.FilePath(tb, key, f))
			if !sort.SliceIsSorted(rows, func(i, j int) bool { return bytes.Compare(rows[i].InfoHash[:], rows[j].InfoHash[:]) < 0 }) {
				t.Fatalf("partition %s file %s not sorted", key, f.Name)
			}
		}
	}
	return out
}

// truth aggregates observations naively.
func truth(obs ...[]schema.Observation) map[schema.Hash]schema.State {
	out := map[schema.Hash]schema.State{}
	for _, os := range obs {
		for _, o := range os {
			s, ok := out[o.InfoHash]
			if !ok {
				s = schema.State{InfoHash: o.InfoHash, FirstSeen: o.ObservedAt, LastSeen: o.ObservedAt}
			}
			s.SeenCount++
			s.FirstSeen = min(s.FirstSeen, o.ObservedAt)
			s.LastSeen = max(s.LastSeen, o.ObservedAt)
			out[o.InfoHash] = s
		}
	}
	return out
}

func compare(t *testing.T, got, want map[schema.Hash]schema.State) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("state has %d hashes, want %d", len(got), len(want))
	}
	for h, w := range want {
		g, ok := got[h]
		if !ok {
			t.Fatalf("hash %x lost", h)
		}
		if g.SeenCount != w.SeenCount || g.FirstSeen != w.FirstSeen || g.LastSeen != w.LastSeen {
			t.Fatalf("hash %x: got count %d first %d last %d, want %d %d %d", h, g.SeenCount, g.FirstSeen, g.LastSeen, w.SeenCount, w.FirstSeen, w.LastSeen)
		}
	}
}

func TestDedupMatchesNaiveAggregation(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	a, b := genObs(1, 20000, 4000), genObs(2, 20000, 4000)
	b = append(b, a[:5000]...) // overlap across runs
	st, err := run(t, data, nil, writeObs(t, dir, a))
	if err != nil {
		t.Fatal(err)
	}
	if st.Observations != 20000 || st.New != st.Distinct || st.InBatchDups != st.Observations-st.Distinct {
		t.Fatalf("first run stats %+v", st)
	}
	st2, err := run(t, data, nil, writeObs(t, dir, b))
	if err != nil {
		t.Fatal(err)
	}
	want := truth(a, b)
	compare(t, readState(t, data), want)
	if st2.ConfirmedKnown == 0 || st2.ConfirmedKnown+st2.New != st2.Distinct {
		t.Fatalf("second run stats %+v", st2)
	}
	if st2.StateRows != int64(len(want)) {
		t.Fatalf("state rows %d want %d", st2.StateRows, len(want))
	}
	for _, s := range readState(t, data) {
		if s.MetadataStatus != schema.StatusNew || s.Tier != schema.TierHot || s.NextRetry == 0 || s.Activity <= 0 {
			t.Fatalf("new hash state %+v", s)
		}
	}
}

// TestBloomFalsePositivesLoseNothing: with a Bloom filter that answers
// "maybe" for nearly every hash (BloomFP 0.9999 sizes a filter of about
// one bit; at 0.95, one sized for minBloomCap keys took only 1.4% of
// these new hashes for known ones), most positives are false, and the
// exact store (the partition's sorted files) must tell them from the
// known hashes among them on the incremental path: MaxFiles is past the
// runs' files, so no partition is compacted by a rewrite, which merges
// its rows by hash. The second run holds only new hashes (a delta file
// appended); the later ones some of the run before's too (spliced). Each
// run confirms exactly the known hashes; none is lost, none is stored
// twice, and each partition holds a file per run that brought it a new
// hash.
func TestBloomFalsePositivesLoseNothing(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	var all [][]schema.Observation
	held := map[schema.Hash]bool{}
	files := map[string]int{} // partition: the files the runs should have left
	for i := range 4 {
		obs := genObs(uint64(10+i), 3000, 2500)
		if i >= 2 {
			obs = append(obs, all[i-1][:1000]...)
		}
		all = append(all, obs)
		known, brought := 0, map[string]bool{}
		for h := range distinctHashes(obs) {
			if held[h] {
				known++
				continue
			}
			held[h] = true
			brought[fmt.Sprintf("%02x", h[0])] = true
		}
		for key := range brought {
			files[key]++
		}
		st, err := run(t, data, func(o *Options) { o.BloomFP = 0.9999; o.MaxFiles = 100 }, writeObs(t, dir, obs))
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && st.FalsePositives < st.New/2 {
			t.Fatalf("run %d: %d false positives of %d new hashes: the filter is not saturated, the test proves little", i, st.FalsePositives, st.New)
		}
		if st.ConfirmedKnown != int64(known) || st.New != st.Distinct-int64(known) {
			t.Fatalf("run %d: confirmed %d known and %d new of %d, want %d known", i, st.ConfirmedKnown, st.New, st.Distinct, known)
		}
	}
	compare(t, readState(t, data), truth(all...))
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := d.Current()
	tb := m.Table(dataset.TableState)
	for _, key := range tb.PartitionKeys() {
		if got := len(tb.Partitions[key]); got != files[key] {
			t.Fatalf("partition %s has %d files, want %d (one per run with a new hash): not the incremental path", key, got, files[key])
		}
	}
}

func TestBadInputsCommitNothing(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	good := writeObs(t, dir, genObs(4, 100, 50))
	if _, err := run(t, data, nil, good); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	goodBytes, _ := os.ReadFile(good)
	wrong := filepath.Join(dir, "wrong.parquet")
	w, _ := rowio.Create[schema.PeerPenalty](wrong, nil)
	w.Write([]schema.PeerPenalty{{Addr: "x"}})
	w.Close()
	tests := []struct{ name, path, want string }{
		{"truncated parquet", write("trunc.parquet", string(goodBytes[:len(goodBytes)/2])), "corrupt Parquet"},
		{"not parquet", write("x.parquet", "PAR1 but not really"), "corrupt Parquet"},
		{"wrong schema", wrong, "missing column \"info_hash\""},
		{"bad hex line", write("h.txt", "0123456789abcdef0123456789abcdef01234567\nnot-a-hash\n"), "h.txt:2"},
		{"empty", write("empty.txt", ""), "empty input"},
		{"binary junk", write("junk.bin", "\x00\x01\x02garbage"), "neither Parquet"},
		{"missing file", filepath.Join(dir, "nope.parquet"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh := writeObs(t, dir, genObs(99, 10, 10))
			_, err := run(t, data, nil, fresh, tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			d, _ := dataset.Open(context.Background(), data, dataset.OpenOptions{})
			m, _ := d.Current()
			if m.Snapshot != 1 {
				t.Fatalf("bad input committed snapshot %d", m.Snapshot)
			}
		})
	}
}

func TestStdinArrowAndDuckDBStyleParquet(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	obs := genObs(5, 2000, 500)
	var buf bytes.Buffer
	w, _ := rowio.Create[schema.Observation]("-", &buf)
	w.Write(obs)
	w.Close()
	if _, err := run(t, data, func(o *Options) { o.Stdin = &buf }, "-"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(data, "inbox")); len(ents) != 0 {
		t.Fatalf("inbox not emptied: %v", ents)
	}
	// DuckDB style: BLOB hash, microsecond timestamps, no hash_type.
	type duckObs struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(microsecond:local)"`
		Source     string `parquet:"source"`
	}
	more := genObs(6, 1000, 300)
	rows := make([]duckObs, len(more))
	for i, o := range more {
		rows[i] = duckObs{InfoHash: append([]byte(nil), o.InfoHash[:]...), ObservedAt: o.ObservedAt * 1000, Source: o.Source}
	}
	p := filepath.Join(dir, "duck.parquet")
	pw, _ := rowio.Create[duckObs](p, nil)
	pw.Write(rows)
	pw.Close()
	if _, err := run(t, data, nil, p); err != nil {
		t.Fatal(err)
	}
	compare(t, readState(t, data), truth(obs, more))
}

func TestReactivationOfFailedHash(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	obs := genObs(7, 100, 20)
	if _, err := run(t, data, nil, writeObs(t, dir, obs)); err != nil {
		t.Fatal(err)
	}
	// Mark every hash failed with a far retry, as merge would.
	d, _ := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	tx, _ := d.Begin()
	tb := tx.Base().Table(dataset.TableState)
	far := t0.Add(30 * 24 * time.Hour).UnixMilli()
	for _, key := range tb.PartitionKeys() {
		rows, _ := dataset.ReadPartition[schema.State](d, tb, key)
		for i := range rows {
			rows[i].MetadataStatus, rows[i].NextRetry, rows[i].Attempts = schema.StatusFailed, far, 5
		}
		sort.Slice(rows, func(i, j int) bool { return bytes.Compare(rows[i].InfoHash[:], rows[j].InfoHash[:]) < 0 })
		fi, err := dataset.WriteStaged(tx, dataset.TableState, key, rows)
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TableState, key, []dataset.FileInfo{fi})
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	// A fresh sighting of one hash, later than anything seen.
	h := obs[0].InfoHash
	seen := t0.Add(5 * time.Hour).UnixMilli()
	calls := 0
	st, err := run(t, data, func(o *Options) {
		o.Now = t0.Add(6 * time.Hour) // after the sighting (FutureSkew)
		o.Reactivate = func(s *schema.State, at, _ int64) bool {
			calls++
			// The rule sees the hash (its jitter reads it) even on the
			// incremental path, which does not decode info_hash.
			if at != seen || s.MetadataStatus != schema.StatusFailed || s.InfoHash != h {
				t.Errorf("reactivate(%+v, %d)", s, at)
			}
			s.NextRetry = at
			return true
		}
	}, writeObs(t, dir, []schema.Observation{{InfoHash: h, HashType: 1, ObservedAt: seen, Source: schema.SourceGetPeers}}))
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || st.Reactivated != 1 {
		t.Fatalf("calls %d stats %+v", calls, st)
	}
	if s := readState(t, data)[h]; s.NextRetry != seen || s.LastSeen != seen {
		t.Fatalf("reactivated state %+v", s)
	}
}

// failAll marks every hash of the dataset failed (no_peers, last tried
// at tried, next retry 30 days later), as merge would.
func failAll(t *testing.T, data string, tried time.Time) {
	t.Helper()
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := d.Begin()
	tb := tx.Base().Table(dataset.TableState)
	for _, key := range tb.PartitionKeys() {
		rows, _ := dataset.ReadPartition[schema.State](d, tb, key)
		for i := range rows {
			r := &rows[i]
			r.MetadataStatus, r.LastFailure, r.Attempts = schema.StatusFailed, schema.OutcomeNoPeers, 5
			r.LastAttempt, r.NextRetry = tried.UnixMilli(), tried.Add(30*24*time.Hour).UnixMilli()
		}
		sort.Slice(rows, func(i, j int) bool { return bytes.Compare(rows[i].InfoHash[:], rows[j].InfoHash[:]) < 0 })
		fi, err := dataset.WriteStaged(tx, dataset.TableState, key, rows)
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TableState, key, []dataset.FileInfo{fi})
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestReactivationIgnoresHowInputsAreSplit: fresh sightings of failed
// hashes at day 2 and day 3 reactivate them at day 2 whether the two
// inputs come in one run, in two runs, or in one run of two commits.
func TestReactivationIgnoresHowInputsAreSplit(t *testing.T) {
	base := genObs(41, 200, 50)
	var day2, day3 []schema.Observation
	for _, o := range base[:20] {
		o.ObservedAt = t0.Add(48 * time.Hour).UnixMilli()
		day2 = append(day2, o)
		o.ObservedAt = t0.Add(72 * time.Hour).UnixMilli()
		day3 = append(day3, o)
	}
	pol := schedule.Default()
	reactivate := func(o *Options) {
		o.Now = t0.Add(96 * time.Hour) // after the sightings (FutureSkew)
		o.Reactivate = func(st *schema.State, at, announcedAt int64) bool {
			return schedule.Reactivate(pol, st, at, announcedAt)
		}
	}
	cases := map[string][][]int{ // the runs' inputs (0: day 2, 1: day 3)
		"one run":      {{0, 1}},
		"two runs":     {{0}, {1}},
		"reverse runs": {{1, 0}},
	}
	var states []map[schema.Hash]schema.State
	for _, name := range []string{"one run", "two runs", "reverse runs"} {
		dir := t.TempDir()
		data := filepath.Join(dir, "ds")
		if _, err := run(t, data, nil, writeObs(t, dir, base)); err != nil {
			t.Fatal(err)
		}
		failAll(t, data, t0.Add(24*time.Hour))
		ins := []string{writeObs(t, dir, day2), writeObs(t, dir, day3)}
		for _, runIns := range cases[name] {
			var args []string
			for _, k := range runIns {
				args = append(args, ins[k])
			}
			if _, err := run(t, data, reactivate, args...); err != nil {
				t.Fatal(err)
			}
		}
		s := readState(t, data)
		for _, o := range day2 {
			if got := s[o.InfoHash].Reactivated; got != o.ObservedAt {
				t.Fatalf("%s: %x reactivated at %d, want %d (the first fresh sighting)", name, o.InfoHash, got, o.ObservedAt)
			}
		}
		states = append(states, s)
	}
	for i := 1; i < len(states); i++ {
		compare(t, states[i], states[0])
		for h, w := range states[0] {
			if g := states[i][h]; g.NextRetry != w.NextRetry || g.Reactivated != w.Reactivated || g.Tier != w.Tier {
				t.Fatalf("%x: next_retry %d reactivated %d tier %s, want %d %d %s", h, g.NextRetry, g.Reactivated, g.Tier, w.NextRetry, w.Reactivated, w.Tier)
			}
		}
	}
}

// hashOnly reads only the info_hash column of a state file.
type hashOnly struct {
	InfoHash schema.Hash `parquet:"info_hash"`
}
