package merge

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestSpliceMatchesRewrite merges the same results into two copies of a
// random state, once splicing partitions where merge can and once
// rewriting every partition whole (the full path): every hash's row, the
// torrents, leases and peers tables and the counters must come out the
// same. The states have several hot files per partition, tier=cold rows
// left in hot files, cold files, hashes due to archive whether results
// touch them or not, leased and released hashes, v2 hashes and avoid
// lists to prune; each case says whether the splice path must be taken
// in every partition, some, or none. Results that touch cold files have
// them read (and spliced, under cold files' names) as the full path reads
// them: tier=hot rows left in them archived, ok results making cold rows
// hot.
func TestSpliceMatchesRewrite(t *testing.T) {
	for _, c := range []struct {
		name          string
		seed          uint64
		worn          int  // per partition: hashes due to archive that no result touches
		unknown       int  // ok results of hashes the state lacks (their partitions are rewritten)
		coldHits      int  // per partition: failures of hashes in cold files
		fetchedUnseen bool // archive fetched hashes unseen for 30 days
		coldOK        bool // ok results of hashes in cold files, and tier=hot rows in cold files
		rewritten     int  // partitions rewritten whole (-1: some)
	}{
		{"every partition spliced", 1, 20, 0, 0, false, false, 0},
		{"archive fetched too", 2, 10, 0, 0, true, false, 0},
		{"unknown hashes added", 3, 20, 3, 0, false, false, -1},
		{"cold files touched", 4, 20, 0, 3, false, false, 0},
		{"cold files touched, unknown hashes added", 6, 20, 3, 2, false, false, -1},
		{"ok results in cold files, hot rows left there", 7, 20, 0, 2, false, true, 0},
		{"hot rows left in cold files no failure touches", 9, 20, 0, 0, false, true, 0},
		{"too many cold rows for the hot files", 5, 300, 0, 0, false, false, len(spliceKeys)},
		{"too many cold rows, cold files touched", 8, 300, 0, 2, false, true, len(spliceKeys)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(c.seed, 7))
			now := t0 + 300*day
			dir := spliceState(t, r, now, c.worn, c.fetchedUnseen, c.coldOK)
			jobs := planJobs(t, dir, now, 400)
			rs := spliceResults(t, r, dir, jobs, now, c.unknown, c.coldHits, c.coldOK)
			in := writeResults(t, rs)
			coldBefore := coldRows(t, dir)
			full := t.TempDir()
			copyTree(t, dir, full)
			at := now + hour // the leases of unanswered jobs still live
			got := mergeVia(t, dir, at, false, in)
			want := mergeVia(t, full, at, true, in)
			if want.Spliced != 0 {
				t.Fatalf("the full path spliced %d partitions", want.Spliced)
			}
			if rw := got.Partitions - got.Spliced; c.rewritten >= 0 && rw != c.rewritten || c.rewritten < 0 && (rw == 0 || got.Spliced == 0) {
				t.Fatalf("%d of %d partitions spliced, want all but %d (-1: some)", got.Spliced, got.Partitions, c.rewritten)
			}
			if got.Archived == 0 || got.Applied == 0 || got.Stored == 0 || got.Released == 0 {
				t.Fatalf("archived %d, applied %d, stored %d, released %d: want some of each",
					got.Archived, got.Applied, got.Stored, got.Released)
			}
			if a, b := statsJSON(t, got), statsJSON(t, want); a != b {
				t.Errorf("stats differ:\nsplice %s\nfull   %s", a, b)
			}
			compareStates(t, stateOf(t, dir), stateOf(t, full))
			if c.rewritten == 0 {
				// A tier=hot row of a cold file is archived only where a
				// result touches the partition's cold files: the full path
				// reads them then, and only then.
				archived, fetched := coldPlaces(t, coldBefore, coldRows(t, dir))
				if c.coldOK && (archived == 0) != (c.coldHits == 0) || c.coldOK && fetched == 0 {
					t.Errorf("in cold files: %d hot rows archived, %d cold rows fetched; want some fetched, some archived iff cold failures",
						archived, fetched)
				}
			}
			for _, table := range []string{dataset.TableTorrents, dataset.TableLeases, dataset.TablePeers} {
				if a, b := tableJSON(t, dir, table), tableJSON(t, full, table); a != b {
					t.Errorf("table %s differs:\nsplice %s\nfull   %s", table, a, b)
				}
			}
		})
	}
}

// spliceKeys are the partitions spliceState fills.
var spliceKeys = []byte{0x10, 0x11, 0x12}

// spliceState commits a random state at dir: per partition of
// spliceKeys, 3 hot files and a cold file, idle worn hashes due to archive
// (not due to plan), and a few hashes whose metadata ok results serve
// (torrentInfo, v1 and v2), in whatever partition they fall. With coldOK,
// half of those are tier=cold rows of cold files, and each cold file of
// spliceKeys holds tier=hot rows too, some due to archive.
func spliceState(t *testing.T, r *rand.Rand, now int64, idle int, fetchedUnseen, coldOK bool) string {
	t.Helper()
	parts := map[string][][]schema.State{}
	p := schedule.Default()
	for _, k := range spliceKeys {
		key := fmt.Sprintf("%02x", k)
		files := make([][]schema.State, 4) // three hot, the last cold
		for i := range 240 + idle {
			h := hashAt(k, uint64(i)<<8|uint64(r.IntN(256)))
			st := newHash(h, now-upTo(r, 30))
			switch kind := r.IntN(10); {
			case i >= 240: // due to archive, not to plan: no result touches it
				st = worn(h, now)
				st.NextRetry = now + 5*day
			case kind == 0: // due to archive and to plan
				st = worn(h, now)
			case kind == 1: // one failure short of archival
				st = worn(h, now)
				st.Attempts--
				st.NextRetry = now + day
			case kind == 2: // fetched long ago
				schedule.ApplySuccess(&st, now-40*day)
				st.LastSeen = now - 40*day
			case kind == 3: // archived: in a hot file (dedup leaves them) or a cold one
				st = worn(h, now)
				st.Tier = schema.TierCold
				if r.IntN(2) == 0 {
					files[3] = append(files[3], st)
					continue
				}
			case kind == 4: // failed before, endpoints to avoid
				if err := schedule.ApplyFailure(p, &st, schema.OutcomeTimeout, now-2*day, false); err != nil {
					t.Fatal(err)
				}
				// Endpoints that fail again in the results: a penalty moves
				// one to the end, keeping the list's length.
				st.AvoidPeers = []string{"10.1.0.1:6881", "10.1.0.2:6881"}
				if r.IntN(3) == 0 {
					st.AvoidPeers = []string{"10.0.0.1:1"} // no penalty: pruned
				}
				st.NextRetry = now - hour
			case kind == 5: // a v2 hash
				st.HashType, st.InfoHashV2 = schema.HashV2, v2Of(h, byte(i))
			case kind == 6: // due to archive, with a lease in the state's own columns (older datasets), live or not
				st = worn(h, now)
				st.LeaseID, st.LeaseUntil = "Lold", now-hour
				if r.IntN(2) == 0 {
					st.LeaseUntil = now + 3*hour // live at the merge
				}
			}
			f := r.IntN(3)
			files[f] = append(files[f], st)
		}
		for i := range 6 * boolInt(coldOK) { // hot rows left in the cold file
			h := hashAt(k, uint64(240+idle+i)<<8|uint64(r.IntN(256)))
			st := newHash(h, now-day)
			if i < 4 { // due to archive, not to plan
				st = worn(h, now)
				st.NextRetry = now + 5*day
			}
			files[3] = append(files[3], st)
		}
		parts[key] = files
	}
	for i := range 12 { // hashes whose metadata the results serve, v1 and v2
		info, h := torrentInfo(fmt.Sprintf("splice-%d", i))
		st := newHash(h, now-day)
		if i%3 == 0 {
			sum := sha256.Sum256(info)
			st = newHash(schema.Hash(sum[:20]), now-day)
		}
		if i%4 == 0 { // a claim the metadata proves wrong
			st.HashType, st.InfoHashV2 = schema.HashV2, v2Of(st.InfoHash, 0xaa)
		}
		key := fmt.Sprintf("%02x", st.InfoHash[0])
		if parts[key] == nil {
			parts[key] = make([][]schema.State, 4)
		}
		if coldOK && i%2 == 1 { // archived before its metadata came
			st.Tier = schema.TierCold
			parts[key][3] = append(parts[key][3], st)
			continue
		}
		parts[key][0] = append(parts[key][0], st)
	}
	dir := commitLayout(t, parts)
	if fetchedUnseen {
		p.Archive.FetchedUnseen = schedule.Duration(30 * schedule.Day)
	}
	if err := schedule.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	return dir
}

// upTo is a random duration of up to days days.
func upTo(r *rand.Rand, days int) int64 { return r.Int64N(int64(days) * day) }

// spliceResults answers jobs at random (failures with peer failures, ok
// results of the hashes whose metadata spliceState knows, released rows,
// stale leases, no answer), adds unleased failures of hashes one failure
// short of archival, ok results of unknown hashes (unknown of them),
// unleased failures of cold-file hashes (coldHits a partition) and, with
// coldOK, unleased ok results of the cold-file hashes whose metadata
// spliceState knows.
func spliceResults(t *testing.T, r *rand.Rand, dir string, jobs []schema.Job, now int64, unknown, coldHits int, coldOK bool) []schema.Result {
	t.Helper()
	infos := map[schema.Hash]schema.Result{}
	for i := range 12 {
		info, h := torrentInfo(fmt.Sprintf("splice-%d", i))
		res := success(schema.Job{InfoHash: h}, info, 0)
		if i%3 == 0 {
			sum := sha256.Sum256(info)
			res.InfoHash, res.HashType = schema.Hash(sum[:20]), schema.HashV2
			if i%2 == 0 {
				res.InfoHashV2 = sum[:]
			}
		}
		infos[res.InfoHash] = res
	}
	var rs []schema.Result
	for _, j := range jobs {
		at := now + 1 + r.Int64N(50)*minute
		if ok, known := infos[j.InfoHash]; known {
			ok.Attempt, ok.LeaseID, ok.AttemptedAt = j.Attempt, j.LeaseID, at
			rs = append(rs, ok)
			continue
		}
		addr := fmt.Sprintf("10.1.%d.%d:6881", r.IntN(4), r.IntN(250))
		if r.IntN(2) == 0 {
			addr = fmt.Sprintf("10.1.0.%d:6881", 1+r.IntN(2))
		}
		switch r.IntN(8) {
		case 0:
			rs = append(rs, released(j, at))
		case 1:
			rs = append(rs, released(j, at), failure(j, schema.OutcomeNoPeers, at))
		case 2:
			stale := j
			stale.LeaseID = "Lstale"
			rs = append(rs, failure(stale, schema.OutcomeNoPeers, at))
		case 3: // no answer: stays leased
		default:
			rs = append(rs, failure(j, schema.OutcomeNoUTMetadata, at,
				schema.PeerFailure{Addr: addr, Class: schema.OutcomeNoUTMetadata, At: at}))
		}
	}
	state := stateOf(t, dir)
	hashes := slices.SortedFunc(maps.Keys(state), hashCmp)
	hits := map[byte]int{} // cold-file failures by partition
	for _, h := range hashes {
		st := state[h]
		leased := slices.ContainsFunc(jobs, func(j schema.Job) bool { return j.InfoHash == h })
		switch {
		case leased:
		case st.Tier == schema.TierHot && st.MetadataStatus == schema.StatusFailed && st.Attempts == 5:
			rs = append(rs, failure(schema.Job{InfoHash: h, HashType: st.HashType}, schema.OutcomeTimeout, now+2*minute))
		case coldOK && st.Tier == schema.TierCold && infos[h].Outcome == schema.OutcomeOK:
			ok := infos[h]
			ok.Attempt, ok.AttemptedAt = 1, now+3*minute
			rs = append(rs, ok)
		case st.Tier == schema.TierCold && hits[h[0]] < coldHits && !inHotFile(t, dir, h):
			rs = append(rs, failure(schema.Job{InfoHash: h, HashType: st.HashType}, schema.OutcomeTimeout, now+2*minute))
			hits[h[0]]++
		}
	}
	for i := range unknown {
		info, h := torrentInfo(fmt.Sprintf("splice-unknown-%d", i))
		rs = append(rs, success(schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 1}, info, now+3*minute))
	}
	return rs
}

// inHotFile reports whether h is in a hot file of dir's state.
func inHotFile(t *testing.T, dir string, h schema.Hash) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, dataset.TableState, "current", fmt.Sprintf("prefix=%02x", h[0]), "*.parquet"))
	for _, f := range files {
		if schedule.IsColdFile(filepath.Base(f)) {
			continue
		}
		rows, err := dataset.ReadFile[schema.State](f)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(rows, func(st schema.State) bool { return st.InfoHash == h }) {
			return true
		}
	}
	return false
}

// coldRows is every row of the cold files of dir's state.
func coldRows(t *testing.T, dir string) map[schema.Hash]schema.State {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, dataset.TableState, "current", "prefix=*", schedule.ColdPrefix+"*.parquet"))
	m := map[schema.Hash]schema.State{}
	for _, f := range files {
		rows, err := dataset.ReadFile[schema.State](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range rows {
			m[st.InfoHash] = st
		}
	}
	return m
}

// coldPlaces checks a merge that spliced every partition: each row of a
// cold file before (before) is in one after (after). It returns how many
// tier=hot rows of cold files were archived there, and how many cold ones
// an ok result made hot (and fetched) stay there.
func coldPlaces(t *testing.T, before, after map[schema.Hash]schema.State) (archived, fetched int) {
	t.Helper()
	for h, b := range before {
		a, ok := after[h]
		if !ok {
			t.Errorf("%x left its cold file", h)
			continue
		}
		if b.Tier == schema.TierHot && a.Tier == schema.TierCold {
			archived++
		}
		if b.Tier == schema.TierCold && a.Tier == schema.TierHot && a.MetadataStatus == schema.StatusFetched {
			fetched++
		}
	}
	return archived, fetched
}

// commitLayout commits a state of the given files per partition (each
// file's rows sorted here; the last file of a partition is a cold one).
func commitLayout(t *testing.T, parts map[string][][]schema.State) string {
	t.Helper()
	dir := t.TempDir()
	layout := map[string][]datasettest.StateFile{}
	for key, files := range parts {
		for i, rows := range files {
			f := datasettest.StateFile{Rows: rows}
			if i == len(files)-1 {
				f.Name = schedule.ColdFileName()
			}
			layout[key] = append(layout[key], f)
		}
	}
	datasettest.CommitStateFiles(t, dir, layout)
	return dir
}

// mergeVia merges inputs into dir at now, by the full path only if full.
func mergeVia(t *testing.T, dir string, now int64, full bool, inputs ...string) Stats {
	t.Helper()
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.fullPath = dir, tm(now), inputs, full
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	return st
}

// TestSpliceSeesAvoidReorder: a failure from an endpoint already in a
// hash's avoid_peers moves it to the end, keeping the list's length; the
// splice must see that column change (and re-encode it) even when no
// other row of the file changes it.
func TestSpliceSeesAvoidReorder(t *testing.T) {
	now := t0 + 300*day
	a, b := "10.2.0.1:6881", "10.2.0.2:6881"
	h := hashAt(0x20, 1)
	st := newHash(h, now-10*day)
	if err := schedule.ApplyFailure(schedule.Default(), &st, schema.OutcomeTimeout, now-2*day, false); err != nil {
		t.Fatal(err)
	}
	st.AvoidPeers, st.NextRetry = []string{a, b}, now-hour
	other := newHash(hashAt(0x21, 1), now-day) // fails with b: b's penalty is live
	dir := makeDataset(t, []schema.State{st, other})
	jobs := planJobs(t, dir, now, 10)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	}
	var rs []schema.Result
	for _, j := range jobs {
		addr := b
		if j.InfoHash == h {
			addr = a
		}
		rs = append(rs, failure(j, schema.OutcomeNoUTMetadata, now+minute,
			schema.PeerFailure{Addr: addr, Class: schema.OutcomeNoUTMetadata, At: now + minute}))
	}
	in := writeResults(t, rs)
	full := t.TempDir()
	copyTree(t, dir, full)
	if got := mergeVia(t, dir, now+hour, false, in); got.Spliced != 2 {
		t.Fatalf("%d partitions spliced, want 2", got.Spliced)
	}
	mergeVia(t, full, now+hour, true, in)
	compareStates(t, stateOf(t, dir), stateOf(t, full))
	if got := stateOf(t, dir)[h].AvoidPeers; !slices.Equal(got, []string{b, a}) {
		t.Errorf("avoid_peers %q, want %q", got, []string{b, a})
	}
}
