package merge

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestMergeWarnsOfForeignLeases: a results input most of whose rows carry
// a lease_id that no lease of the dataset holds (results planned by
// another dataset, by a plan-retries older than dataset ids: lease IDs
// naming none, else merge refuses them, TestForeignResultsRefused) is
// merged as before (late failures ignored, rows of hashes the state lacks
// added) and warned about in one line naming the input and the counts;
// results of the dataset's own leases, a minority of foreign ones and
// unleased results (a manual fetch) are not.
func TestMergeWarnsOfForeignLeases(t *testing.T) {
	tests := []struct {
		name               string
		own, foreign       int  // results under the dataset's lease, and another dataset's
		unleased           int  // results without a lease_id
		warn               bool // the line, with foreign of own+foreign+unleased
		late, newStateRows int
	}{
		{"another dataset's results", 0, 4, 0, true, 4, 4},
		{"most of them another's", 1, 3, 0, true, 3, 3},
		{"its own results", 4, 0, 0, false, 0, 0},
		{"half of them another's", 2, 2, 0, false, 2, 2},
		{"unleased results", 0, 0, 4, false, 0, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mine, theirs []schema.State
			for i := range 4 {
				mine = append(mine, newHash(hashAt(1, uint64(i)), t0))
				theirs = append(theirs, newHash(hashAt(2, uint64(i)), t0))
			}
			dir := makeDataset(t, mine)
			ownJobs := planJobs(t, dir, t0+hour, 10)
			// Planned a second later: a lease_id is made of the seed, the
			// planning time and the snapshot, which two datasets of the
			// same seed planning at the same --now and snapshot share.
			foreignJobs := planJobs(t, makeDataset(t, theirs), t0+hour+1000, 10)
			for i := range foreignJobs { // as an older plan-retries named them
				foreignJobs[i].LeaseID = foreignJobs[i].LeaseID[:17]
			}
			var rs []schema.Result
			for _, j := range ownJobs[:tt.own] {
				rs = append(rs, failure(j, schema.OutcomeNoPeers, t0+hour+minute))
			}
			for _, j := range foreignJobs[:tt.foreign] {
				rs = append(rs, failure(j, schema.OutcomeNoPeers, t0+hour+minute))
			}
			for _, j := range foreignJobs[:tt.unleased] {
				j.LeaseID = ""
				rs = append(rs, failure(j, schema.OutcomeNoPeers, t0+hour+minute))
			}
			in := writeResults(t, rs)
			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
			st := runMerge(t, dir, t0+2*hour, in)
			if int(st.LateFailures) != tt.late {
				t.Errorf("late failures ignored %d, want %d (merge applies as before)", st.LateFailures, tt.late)
			}
			if n := len(readTable[schema.State](t, dir, dataset.TableState)); n != 4+tt.newStateRows {
				t.Errorf("%d state rows, want %d", n, 4+tt.newStateRows)
			}
			var warned []string
			for _, line := range strings.Split(log.String(), "\n") {
				if strings.Contains(line, "level=WARN") {
					warned = append(warned, line)
				}
			}
			want := "merge: " + in + ": " + strconv.Itoa(tt.foreign) + " of " + strconv.Itoa(len(rs)) +
				" results carry leases this dataset never issued (results of another dataset?)"
			switch {
			case tt.warn && (len(warned) != 1 || !strings.Contains(warned[0], want)):
				t.Fatalf("warnings %q, want one saying %q", warned, want)
			case !tt.warn && len(warned) != 0:
				t.Fatalf("warned: %q", warned)
			}
		})
	}
}

// TestLateResultsOfOwnLeaseNotForeign: a fetch that crashed leaves its
// jobs leased; once the lease ends they are planned again, and the
// crashed run's results, merged after the new ones, are late: ignored,
// each hash's attempt counted once. Their lease_id names this dataset,
// so merge knows it issued them (and no lease holds it any more only
// because the hash was planned again): it must not warn that they are
// another dataset's, as it did when it judged them by the lease table.
func TestLateResultsOfOwnLeaseNotForeign(t *testing.T) {
	var states []schema.State
	for i := range 4 {
		states = append(states, newHash(hashAt(3, uint64(i)), t0))
	}
	dir := makeDataset(t, states)
	crashed := planJobs(t, dir, t0, 10)
	var late []schema.Result
	for _, j := range crashed {
		late = append(late, failure(j, schema.OutcomeNoPeers, t0+minute))
	}
	again := planJobs(t, dir, t0+3*hour, 10) // the 2h leases ended
	if len(again) != len(crashed) {
		t.Fatalf("%d of %d crashed jobs planned again after their lease", len(again), len(crashed))
	}
	var rs []schema.Result
	for _, j := range again {
		rs = append(rs, failure(j, schema.OutcomeNoPeers, t0+3*hour+minute))
	}
	runMerge(t, dir, t0+3*hour+2*minute, writeResults(t, rs))
	var log bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	st := runMerge(t, dir, t0+3*hour+3*minute, writeResults(t, late))
	if st.LateFailures != int64(len(late)) || st.Applied != 0 {
		t.Errorf("late results: %d ignored, %d applied; want all %d ignored", st.LateFailures, st.Applied, len(late))
	}
	for h, s := range stateOf(t, dir) {
		if s.Attempts != 1 {
			t.Errorf("%x: %d attempts, want 1 (the late result counts no second)", h[:1], s.Attempts)
		}
	}
	if strings.Contains(log.String(), "level=WARN") {
		t.Errorf("merge of the dataset's own late results warned:\n%s", log.String())
	}
}
