package app

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestMergeDoneLineSaysWhatWasPruned: a merge whose input holds no result
// row commits a snapshot when housekeeping prunes something (leases that
// ended over 7 days ago, peer penalties past peer_penalty.forget), and its
// final line says what it dropped, in the text log and the JSON one: it
// read results=0 and a new snapshot, and nothing else.
func TestMergeDoneLineSaysWhatWasPruned(t *testing.T) {
	at := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		format string
		want   []string
	}{
		{"text", []string{` results=0 `, ` stale_leases_dropped=2 `, ` peers_forgotten=1 `, ` snapshot=`}},
		{"json", []string{`"results":0,`, `"stale_leases_dropped":2,`, `"peers_forgotten":1,`}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ih")
			seedHashes(t, data, 3, 7)
			jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at.Format(time.RFC3339), "-o", "-"))
			if len(jobs) != 3 {
				t.Fatalf("%d jobs, want 3", len(jobs))
			}
			j := jobs[0]
			failed := at.Add(time.Minute).UnixMilli()
			rs := []schema.Result{{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt, LeaseID: j.LeaseID,
				AttemptedAt: failed, Outcome: schema.OutcomeConnectFailed,
				PeerFailures: []schema.PeerFailure{{Addr: "127.0.0.1:6001", Class: schema.OutcomeConnectFailed, At: failed}}}}
			mustRun(t, resultsArrow(t, rs), "merge", "--data", data, "--far-now", "--now", at.Add(2*time.Minute).Format(time.RFC3339), "-")
			// 60 days on: the two other leases ended over 7 days ago, the
			// penalty is past the default forget (30 days).
			late := at.Add(60 * 24 * time.Hour).Format(time.RFC3339)
			r := ih(t, resultsArrow(t, nil), "merge", "--data", data, "--far-now", "--now", late, "--log-format", tt.format, "-")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var line string
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.Contains(l, "merge: done") {
					line = l
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("final line lacks %s:\n%s", w, r.stderr)
				}
			}
		})
	}
}
