package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

func TestMergeStoresOK(t *testing.T) {
	info, h := torrentInfo("ubuntu.iso")
	dir := makeDataset(t, []schema.State{newHash(h, t0), newHash(hashAt(h[0], 7), t0)})
	jobs := planJobs(t, dir, t0+hour, 10)
	if len(jobs) != 2 {
		t.Fatalf("planned %d jobs, want 2", len(jobs))
	}
	var j schema.Job
	for _, x := range jobs {
		if x.InfoHash == h {
			j = x
		}
	}
	st := runMerge(t, dir, t0+2*hour, writeResults(t, []schema.Result{success(j, info, t0+hour+minute)}))
	if st.Stored != 1 || st.LeasesReleased != 1 || st.Torrents != 1 || st.Partitions != 1 {
		t.Fatalf("stats %+v", st)
	}
	got := stateOf(t, dir)[h]
	if got.MetadataStatus != schema.StatusFetched || got.NextRetry != 0 || got.Attempts != 1 || got.LastAttempt != t0+hour+minute {
		t.Errorf("state after ok: %+v", got)
	}
	tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
	if len(tor) != 1 || tor[0].InfoHash != h || string(tor[0].InfoBytes) != string(info) ||
		tor[0].FetchedAt != t0+hour+minute+1500 || tor[0].ServedBy != "127.0.0.1:6881" || tor[0].MetadataSize != int64(len(info)) {
		t.Fatalf("torrents: %+v", tor)
	}
	if _, err := os.Stat(filepath.Join(dir, "torrents", "current", "prefix="+strings.ToLower(schema.Hex(h)[:2]))); err != nil {
		t.Errorf("torrents partition dir: %v", err)
	}
	// The other hash keeps its lease; the fetched one is never planned again.
	if again := planJobs(t, dir, t0+30*24*hour, 10); len(again) != 1 || again[0].InfoHash == h {
		t.Errorf("after merge, planned %v", again)
	}
}

func TestMergeFailureSchedulesAndPenalises(t *testing.T) {
	h := hashAt(0x42, 1)
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	j := planJobs(t, dir, t0, 1)[0]
	at := t0 + minute
	res := failure(j, schema.OutcomeNoUTMetadata, at,
		schema.PeerFailure{Addr: "127.0.0.1:7001", Class: schema.OutcomeNoUTMetadata, At: at},
		schema.PeerFailure{Addr: "127.0.0.1:7002", Class: schema.OutcomeConnectFailed, At: at})
	st := runMerge(t, dir, at+minute, writeResults(t, []schema.Result{res}))
	if st.Applied != 1 || st.PeerPenalties != 2 || st.PeerRows != 2 || st.LeasesReleased != 1 {
		t.Fatalf("stats %+v", st)
	}
	got := stateOf(t, dir)[h]
	if got.MetadataStatus != schema.StatusFailed || got.Attempts != 1 || got.LastFailure != schema.OutcomeNoUTMetadata {
		t.Fatalf("state: %+v", got)
	}
	if d := got.NextRetry - at; d < 8*minute || d > 12*minute {
		t.Errorf("peer-level failure retried after %dm, want ~10m (soon)", d/minute)
	}
	if strings.Join(got.AvoidPeers, ",") != "127.0.0.1:7001,127.0.0.1:7002" {
		t.Errorf("avoid_peers = %v", got.AvoidPeers)
	}
	peers := readTable[schema.PeerPenalty](t, dir, dataset.TablePeers)
	if len(peers) != 2 || peers[0].Addr != "127.0.0.1:7001" || peers[0].Until != at+day || peers[1].Until != at+10*minute {
		t.Errorf("peers: %+v", peers)
	}
	// The retry avoids the still-penalised endpoint only: connect_failed's
	// 10 minutes are over when the retry is due.
	next := planJobs(t, dir, got.NextRetry+15*minute, 1)
	if len(next) != 1 || next[0].Reason != schema.ReasonRetry || next[0].Attempt != 2 {
		t.Fatalf("retry jobs: %+v", next)
	}
	if strings.Join(next[0].AvoidPeers, ",") != "127.0.0.1:7001" {
		t.Errorf("job avoid_peers = %v, want only the endpoint still penalised", next[0].AvoidPeers)
	}
	st = runMerge(t, dir, got.NextRetry+20*minute, writeResults(t, []schema.Result{failure(next[0], schema.OutcomeNoPeers, got.NextRetry+16*minute)}))
	if got := stateOf(t, dir)[h]; strings.Join(got.AvoidPeers, ",") != "127.0.0.1:7001" {
		t.Errorf("after the connect_failed penalty ended, avoid_peers = %v", got.AvoidPeers)
	}
}

func TestLateResults(t *testing.T) {
	info, h := torrentInfo("late")
	g := hashAt(h[0], 9)
	dir := makeDataset(t, []schema.State{newHash(h, t0), newHash(g, t0)})
	first := planJobs(t, dir, t0, 10)
	// Nobody merged: the leases (2h) expire and the hashes are planned again.
	if n := len(planJobs(t, dir, t0+hour, 10)); n != 0 {
		t.Fatalf("planned %d hashes under live leases", n)
	}
	second := planJobs(t, dir, t0+3*hour, 10)
	if len(second) != 2 || second[0].LeaseID == first[0].LeaseID {
		t.Fatalf("after the leases expired: %v", second)
	}
	var oldH, oldG schema.Job
	for _, j := range first {
		if j.InfoHash == h {
			oldH = j
		} else {
			oldG = j
		}
	}
	// The first fetch finishes late: its ok is stored, its failure ignored
	// for the hash, but not its peer's: the endpoint failed whichever
	// lease asked, and is penalised (README, merge --help).
	peer := schema.PeerFailure{Addr: "127.0.0.1:7009", Class: schema.OutcomeConnectFailed, At: t0 + 3*hour + minute}
	st := runMerge(t, dir, t0+4*hour, writeResults(t, []schema.Result{
		success(oldH, info, t0+3*hour+minute), failure(oldG, schema.OutcomeConnectFailed, t0+3*hour+minute, peer)}))
	if st.LateStored != 1 || st.LateFailures != 1 || st.Applied != 0 || st.LeasesReleased != 1 || st.PeerPenalties != 1 {
		t.Fatalf("stats %+v", st)
	}
	if ps := readTable[schema.PeerPenalty](t, dir, dataset.TablePeers); len(ps) != 1 || ps[0].Addr != peer.Addr {
		t.Errorf("peers %+v, want the late failure's endpoint penalised", ps)
	}
	s := stateOf(t, dir)
	if s[h].MetadataStatus != schema.StatusFetched || s[g].MetadataStatus != schema.StatusNew || s[g].Attempts != 0 {
		t.Fatalf("state: %+v / %+v", s[h], s[g])
	}
	// The second fetch's ok for h is a duplicate; its failure for g counts.
	var newG, newH schema.Job
	for _, j := range second {
		if j.InfoHash == g {
			newG = j
		} else {
			newH = j
		}
	}
	st = runMerge(t, dir, t0+5*hour, writeResults(t, []schema.Result{
		success(newH, info, t0+4*hour), failure(newG, schema.OutcomeNoPeers, t0+4*hour)}))
	if st.DuplicateOK != 1 || st.Applied != 1 || st.Torrents != 0 {
		t.Fatalf("stats %+v", st)
	}
	if n := len(readTable[schema.Torrent](t, dir, dataset.TableTorrents)); n != 1 {
		t.Errorf("%d torrent rows, want the hash stored once", n)
	}
}

func TestSameResultsTwiceChangeNothing(t *testing.T) {
	h := hashAt(0x10, 1)
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	j := planJobs(t, dir, t0, 1)[0]
	res := []schema.Result{failure(j, schema.OutcomeTimeout, t0+minute)}
	path := writeResults(t, res)
	runMerge(t, dir, t0+2*minute, path)
	before := stateOf(t, dir)[h]
	st := runMerge(t, dir, t0+3*minute, path)
	if st.InputsSkipped != 1 || st.Results != 0 {
		t.Fatalf("second merge of the same file: %+v", st)
	}
	// The same result in another file (different bytes): the lease is gone.
	st = runMerge(t, dir, t0+4*minute, writeResults(t, append(res, res...)))
	after := stateOf(t, dir)[h]
	if st.LateFailures != 2 || after.Attempts != before.Attempts || after.NextRetry != before.NextRetry {
		t.Fatalf("re-applied results changed the state: %+v → %+v (%+v)", before, after, st)
	}
}

func TestUnleasedResults(t *testing.T) {
	known := hashAt(0x20, 1)
	info, unknown := torrentInfo("not in the state")
	dir := makeDataset(t, []schema.State{newHash(known, t0)})
	rs := []schema.Result{
		{InfoHash: known, AttemptedAt: t0 + minute, Outcome: schema.OutcomeNoPeers},
		{InfoHash: known, AttemptedAt: t0 + minute, Outcome: schema.OutcomeNoPeers}, // the same attempt again
		success(schema.Job{InfoHash: unknown}, info, t0+minute),
	}
	st := runMerge(t, dir, t0+hour, writeResults(t, rs))
	if st.Applied != 1 || st.StaleFailures != 1 || st.Stored != 1 || st.UnknownHashes != 1 {
		t.Fatalf("stats %+v", st)
	}
	s := stateOf(t, dir)
	if s[known].Attempts != 1 || s[unknown].MetadataStatus != schema.StatusFetched || s[unknown].FirstSeen != t0+minute {
		t.Fatalf("state: %+v / %+v", s[known], s[unknown])
	}
}

// TestArchiveToColdFilesAndBack: a failed hash past the archive
// thresholds goes cold once its lease is over, and a late result still
// counts for it. The full path moves it to a cold file (and writes that
// file again for the late result); the splice path leaves it, tier cold,
// in its hot file.
func TestArchiveToColdFilesAndBack(t *testing.T) {
	for _, full := range []bool{true, false} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) { archiveAndBack(t, full) })
	}
}

func archiveAndBack(t *testing.T, full bool) {
	p := schedule.Default()
	old := newHash(hashAt(0x30, 1), t0)
	for i := range 6 {
		if err := schedule.ApplyFailure(p, &old, schema.OutcomeNoPeers, t0+int64(i)*day, false); err != nil {
			t.Fatal(err)
		}
	}
	other := newHash(hashAt(0x30, 2), t0)
	dir := makeDataset(t, []schema.State{old, other})
	now := t0 + 100*day
	j := planJobs(t, dir, now, 10)
	var oj, oldJob schema.Job
	for _, x := range j {
		if x.InfoHash == other.InfoHash {
			oj = x
		} else {
			oldJob = x
		}
	}
	st := mergeVia(t, dir, now+minute, full, writeResults(t, []schema.Result{failure(oj, schema.OutcomeNoPeers, now)}))
	// old was leased by that plan: it is not archived while its lease lives.
	if st.Archived != 0 {
		t.Fatalf("archived a leased hash: %+v", st)
	}
	st = mergeVia(t, dir, now+3*hour, full, writeResults(t, []schema.Result{failure(oj, schema.OutcomeNoPeers, now+2*hour)}))
	if st.Archived != 1 || st.Spliced != boolInt(!full) {
		t.Fatalf("stats %+v", st)
	}
	s := stateOf(t, dir)
	if s[old.InfoHash].Tier != schema.TierCold || s[other.InfoHash].Tier != schema.TierHot {
		t.Fatalf("tiers: %s, %s", s[old.InfoHash].Tier, s[other.InfoHash].Tier)
	}
	cold, _ := filepath.Glob(filepath.Join(dir, "state", "current", "prefix=30", schedule.ColdPrefix+"*.parquet"))
	if len(cold) != boolInt(full) {
		t.Fatalf("cold files: %v", cold)
	}
	// The cold hash's late result (its lease expired, nobody replaced it)
	// still counts, and rewrites the file that holds it.
	st = mergeVia(t, dir, now+4*hour, full, writeResults(t, []schema.Result{failure(oldJob, schema.OutcomeTimeout, now+4*hour)}))
	s = stateOf(t, dir)
	if st.Applied != 1 || s[old.InfoHash].Tier != schema.TierCold || s[old.InfoHash].Attempts != 7 {
		t.Fatalf("cold hash after a failure: %+v (%+v)", s[old.InfoHash], st)
	}
	cold2, _ := filepath.Glob(filepath.Join(dir, "state", "current", "prefix=30", schedule.ColdPrefix+"*.parquet"))
	if full && (len(cold2) != 1 || cold2[0] == cold[0]) || !full && len(cold2) != 0 {
		t.Errorf("cold files after a cold result: %v (before %v)", cold2, cold)
	}
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestMergeBadInput(t *testing.T) {
	h := hashAt(0x50, 1)
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	bad := []struct {
		name string
		res  schema.Result
		want string
	}{
		{"unknown outcome", schema.Result{InfoHash: h, AttemptedAt: t0, Outcome: "gone"}, `unknown outcome "gone"`},
		{"unverified ok", schema.Result{InfoHash: h, AttemptedAt: t0, Outcome: schema.OutcomeOK, ResultMeta: schema.ResultMeta{InfoBytes: []byte("d4:name1:xe")}}, "do not hash to the infohash"},
		{"no time", schema.Result{InfoHash: h, Outcome: schema.OutcomeNoPeers}, "attempted_at is missing"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			path := writeResults(t, []schema.Result{{InfoHash: h, AttemptedAt: t0, Outcome: schema.OutcomeNoPeers}, tt.res})
			_, err := tryMerge(dir, t0+hour, path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path+": row 2") || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d); want exit 2 naming %s row 2: %s", err, exitcode.Of(err), path, tt.want)
			}
			if s := stateOf(t, dir)[h]; s.Attempts != 0 {
				t.Fatalf("a rejected input changed the state")
			}
		})
	}
	notResults := filepath.Join(t.TempDir(), "x.parquet")
	os.WriteFile(notResults, []byte("PAR1 not really"), 0o644)
	if _, err := tryMerge(dir, t0, notResults); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("garbage input: %v", err)
	}
	if _, err := tryMerge(dir, t0); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("no input: %v", err)
	}
}

// TestColdRowsInHotFilesSurvive: dedup's rewrite may put cold rows into a
// hot file; merge loses none: the full path moves them back to a cold
// file, the splice path leaves them (a few) where they are.
func TestColdRowsInHotFilesSurvive(t *testing.T) {
	for _, full := range []bool{true, false} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) { coldRowsSurvive(t, full) })
	}
}

func coldRowsSurvive(t *testing.T, full bool) {
	cold := newHash(hashAt(0x60, 1), t0)
	cold.MetadataStatus, cold.Attempts, cold.Tier, cold.NextRetry, cold.LastFailure = schema.StatusFailed, 9, schema.TierCold, t0+100*day, "no_peers"
	hot := newHash(hashAt(0x60, 2), t0)
	dir := makeDataset(t, []schema.State{cold, hot}) // both in one hot file
	j := planJobs(t, dir, t0+hour, 10)
	if len(j) != 1 || j[0].InfoHash != hot.InfoHash {
		t.Fatalf("planned %v", j)
	}
	mergeVia(t, dir, t0+2*hour, full, writeResults(t, []schema.Result{failure(j[0], schema.OutcomeNoPeers, t0+hour)}))
	s := stateOf(t, dir)
	if len(s) != 2 || s[cold.InfoHash].Tier != schema.TierCold || s[cold.InfoHash].Attempts != 9 {
		t.Fatalf("state after merge: %+v", s)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "state", "current", "prefix=60", schedule.ColdPrefix+"*"))
	if len(files) != boolInt(full) {
		t.Errorf("cold files: %v", files)
	}
}

// A lease past its grace (leases.Grace after its end) is gone for
// results, although merge drops it from the table only at its commit: an
// unleased result counts, and one under that lease is late.
func TestLeasePastItsGrace(t *testing.T) {
	for _, tc := range []struct {
		name        string
		leased      bool
		at          int64
		applied     int64
		late        int64
		wantAttempt int32
	}{
		{"unleased within the grace", false, t0 + 6*day, 0, 1, 0},
		{"unleased past the grace", false, t0 + 8*day, 1, 0, 1},
		{"leased within the grace", true, t0 + 6*day, 1, 0, 1},
		{"leased past the grace", true, t0 + 20*day, 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hashAt(0x60, 1)
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			j := planJobs(t, dir, t0, 1)[0]
			if !tc.leased {
				j.LeaseID = ""
			}
			st := runMerge(t, dir, tc.at+minute, writeResults(t, []schema.Result{failure(j, schema.OutcomeNoPeers, tc.at)}))
			if st.Applied != tc.applied || st.LateFailures != tc.late {
				t.Fatalf("stats %+v, want %d applied and %d late", st, tc.applied, tc.late)
			}
			if got := stateOf(t, dir)[h]; got.Attempts != tc.wantAttempt {
				t.Errorf("attempts = %d, want %d", got.Attempts, tc.wantAttempt)
			}
		})
	}
}
