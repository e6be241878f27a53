package fetch

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// writeJobsWithAvoid writes jobs to path ("-": an Arrow stream into
// stdin) with avoid as the file's avoid list.
func writeJobsWithAvoid(t *testing.T, path string, stdin *bytes.Buffer, jobs []schema.Job, avoid string) {
	t.Helper()
	w, err := rowio.Create[schema.Job](path, stdin)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetMetadata(schema.AvoidPeersKey, avoid); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(jobs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestJobsFileAvoidListIsSkippedForEveryJob: a peer without BEP 10,
// penalised once in peers/, is not dialled again for any job of the file,
// although no job's own avoid_peers names it; a penalty that has ended
// is no longer avoided.
func TestJobsFileAvoidListIsSkippedForEveryJob(t *testing.T) {
	noExt := startPeer(t, badpeers.NoExtension)
	over := startPeer(t, badpeers.Reject)
	future, past := time.Now().Add(time.Hour).UnixMilli(), time.Now().Add(-time.Minute).UnixMilli()
	avoid, _ := schema.EncodeAvoidPeers([]schema.AvoidedPeer{{Addr: noExt.Addr(), Until: future}, {Addr: over.Addr(), Until: past}})
	var jobs []schema.Job
	for i := range 3 {
		jobs = append(jobs, schema.Job{InfoHash: schema.Hash{0xa0, byte(i)}, Peers: []string{noExt.Addr()}})
	}
	jobs = append(jobs, schema.Job{InfoHash: schema.Hash{0xa1}, Peers: []string{over.Addr()}})
	for _, in := range []string{"jobs.parquet", "-"} {
		t.Run(in, func(t *testing.T) {
			dir := t.TempDir()
			var stdin bytes.Buffer
			path := in
			if in != "-" {
				path = filepath.Join(dir, in)
			}
			writeJobsWithAvoid(t, path, &stdin, jobs, avoid)
			o := testOptions()
			o.Input, o.Output, o.Stdin = path, filepath.Join(dir, "results.parquet"), &stdin
			st, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if st.PeersAvoided != 3 || st.Connects != 1 {
				t.Fatalf("peers_avoided %d, connects %d; want the penalised peer skipped by all 3 of its jobs and 1 dial to the peer whose penalty ended", st.PeersAvoided, st.Connects)
			}
			res := readResults(t, o.Output)
			if r := res[schema.Hash{0xa1}]; r.Outcome != schema.OutcomeRejected {
				t.Errorf("the peer whose penalty ended: outcome %s, want it tried (rejected)", r.Outcome)
			}
		})
	}
}

// TestNamedPeerIsTriedWhilePenalised: a --peer endpoint the dataset
// penalises (a peer that lacked one torrent fails that hash's handshake,
// which penalises it for all) is still dialled for every job: the user
// named it. A job's own avoid_peers still skips it for that job.
func TestNamedPeerIsTriedWhilePenalised(t *testing.T) {
	p := startPeer(t, badpeers.Reject)
	avoid, _ := schema.EncodeAvoidPeers([]schema.AvoidedPeer{{Addr: p.Addr(), Until: time.Now().Add(time.Hour).UnixMilli()}})
	jobs := []schema.Job{{InfoHash: schema.Hash{0xb0}}, {InfoHash: schema.Hash{0xb1}}, {InfoHash: schema.Hash{0xb2}, AvoidPeers: []string{p.Addr()}}}
	dir := t.TempDir()
	in := filepath.Join(dir, "jobs.parquet")
	writeJobsWithAvoid(t, in, nil, jobs, avoid)
	o := testOptions()
	o.Input, o.Output, o.Peers = in, filepath.Join(dir, "results.parquet"), []string{p.Addr()}
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Connects != 2 || st.PeersAvoided != 1 {
		t.Fatalf("connects %d, peers_avoided %d; want the named peer dialled for the 2 jobs that do not avoid it", st.Connects, st.PeersAvoided)
	}
	res := readResults(t, o.Output)
	for _, h := range []schema.Hash{{0xb0}, {0xb1}} {
		if r := res[h]; r.Outcome != schema.OutcomeRejected {
			t.Errorf("job %x: outcome %s, want the named peer tried (rejected)", h[0], r.Outcome)
		}
	}
}

func TestJobsFileBadAvoidListIsBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "jobs.parquet")
	writeJobsWithAvoid(t, in, nil, []schema.Job{{InfoHash: schema.Hash{1}}}, "127.0.0.1 soon\n")
	o := testOptions()
	o.Input, o.Output = in, filepath.Join(dir, "results.parquet")
	if _, err := Run(context.Background(), o); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("err %v (exit %d), want bad input (exit 2)", err, exitcode.Of(err))
	}
}

// TestAllAvoidedWaitsForPenalty: an attempt that skips every peer it
// found, one of them for a penalty still running (the jobs file's avoid
// list, which penalties earned with any hash fill), is peers_penalised,
// and retry_after is the earliest end among the running penalties: the
// hash waits for it with no failure of its own. It was rejected, which
// counted against a hash nobody was dialled for. One the file does not
// list has a penalty of unknown end, taken as running: peers_penalised,
// retry_after the attempt's time. (A job's avoid_peers entry the file
// dates as over is dialled: TestEndedAvoidPeerIsDialled.)
func TestAllAvoidedWaitsForPenalty(t *testing.T) {
	const p1, p2, src = "127.0.0.1:7101", "127.0.0.1:7102", "127.0.0.1:7103"
	now := time.Now()
	soon, later, past := now.Add(time.Hour).UnixMilli(), now.Add(3*time.Hour).UnixMilli(), now.Add(-time.Minute).UnixMilli()
	avoid, _ := schema.EncodeAvoidPeers([]schema.AvoidedPeer{{Addr: p1, Until: later}, {Addr: p2, Until: soon}, {Addr: src, Until: past}})
	tests := []struct {
		name         string
		job          schema.Job
		want         string
		retryAfter   int64
		wantInDetail string
	}{
		{"its only peer penalised for another hash", schema.Job{InfoHash: schema.Hash{0xc0}, Peers: []string{p1}},
			schema.OutcomePeersPenalised, later, "penalised"},
		{"two penalised peers: the earlier end", schema.Job{InfoHash: schema.Hash{0xc1}, Peers: []string{p1, p2}},
			schema.OutcomePeersPenalised, soon, "the first penalty ends at"},
		{"a running penalty, also in the job's own avoid_peers",
			schema.Job{InfoHash: schema.Hash{0xc3}, Peers: []string{p2}, AvoidPeers: []string{p2}},
			schema.OutcomePeersPenalised, soon, "penalised"},
		{"only a job's avoid_peers the file does not list",
			schema.Job{InfoHash: schema.Hash{0xc5}, Peers: []string{"127.0.0.1:7104"}, AvoidPeers: []string{"127.0.0.1:7104"}},
			schema.OutcomePeersPenalised, attemptTime, "their penalty's end unknown"},
	}
	var jobs []schema.Job
	for _, tt := range tests {
		jobs = append(jobs, tt.job)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "jobs.parquet")
	writeJobsWithAvoid(t, in, nil, jobs, avoid)
	o := testOptions()
	o.Input, o.Output = in, filepath.Join(dir, "results.parquet")
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Connects != 0 || st.Outcomes[schema.OutcomePeersPenalised] != 4 || len(st.Outcomes) != 1 {
		t.Fatalf("connects %d, outcomes %v; want nobody dialled, 4 peers_penalised", st.Connects, st.Outcomes)
	}
	res := readResults(t, o.Output)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := res[tt.job.InfoHash]
			if tt.retryAfter == attemptTime {
				tt.retryAfter = r.AttemptedAt
			}
			if r.Outcome != tt.want || r.RetryAfter != tt.retryAfter || !strings.Contains(r.Detail, tt.wantInDetail) ||
				r.PeersTried != 0 || len(r.PeerFailures) != 0 {
				t.Fatalf("outcome %s (%s), retry_after %d, tried %d, peer failures %v; want %s, retry_after %d, none tried",
					r.Outcome, r.Detail, r.RetryAfter, r.PeersTried, r.PeerFailures, tt.want, tt.retryAfter)
			}
		})
	}
}

// attemptTime stands, as a test's retry_after, for the result's own
// attempted_at.
const attemptTime = -1

// TestAvoidPeersWithoutFileList: a jobs file without the file-level avoid
// list (key infohash.avoid_peers; older plan-retries wrote none) whose
// jobs carry avoid_peers: a peer skipped so has a penalty of unknown end,
// taken as running, so an attempt that skipped every peer it found is
// peers_penalised (no failure of the hash; merge defers it by retry_soon,
// retry_after being the attempt's time), not rejected, a counted failure
// that moved the hash's backoff. A peer the job does not avoid is tried.
func TestAvoidPeersWithoutFileList(t *testing.T) {
	tor := badpeers.NewTorrent(12, 1, 10)
	good := startPeer(t, badpeers.Good, tor)
	const gone = "127.0.0.1:7201" // avoided: never dialled
	jobs := []schema.Job{
		{InfoHash: schema.Hash{0xd0}, Peers: []string{gone}, AvoidPeers: []string{gone}},
		{InfoHash: schema.Hash{0xd1}, Peers: []string{gone, "127.0.0.1:7202"}, AvoidPeers: []string{gone, "127.0.0.1:7202"}},
		{InfoHash: tor.InfoHash, Peers: []string{gone, good.Addr()}, AvoidPeers: []string{gone}},
	}
	for _, in := range []string{"jobs.parquet", "-"} {
		t.Run(in, func(t *testing.T) {
			dir := t.TempDir()
			var stdin bytes.Buffer
			path := in
			if in != "-" {
				path = filepath.Join(dir, in)
				writeRows(t, path, jobs)
			} else {
				stdin = *jobStream(t, jobs)
			}
			o := testOptions()
			o.Input, o.Output, o.Stdin = path, filepath.Join(dir, "results.parquet"), &stdin
			st, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if st.Connects != 1 || st.PeersAvoided != 4 || st.Outcomes[schema.OutcomePeersPenalised] != 2 || st.Outcomes[schema.OutcomeOK] != 1 {
				t.Fatalf("connects %d, peers_avoided %d, outcomes %v; want 1 dial (the peer not avoided), 4 avoided, "+
					"2 peers_penalised, 1 ok", st.Connects, st.PeersAvoided, st.Outcomes)
			}
			res := readResults(t, o.Output)
			for _, j := range jobs[:2] {
				r := res[j.InfoHash]
				if r.Outcome != schema.OutcomePeersPenalised || r.RetryAfter != r.AttemptedAt || r.AttemptedAt == 0 ||
					r.PeersTried != 0 || len(r.PeerFailures) != 0 || !strings.Contains(r.Detail, "their penalty's end unknown") {
					t.Errorf("%x: outcome %s (%s), retry_after %d (attempted_at %d), tried %d, peer failures %v; "+
						"want peers_penalised, retry_after the attempt's time, none tried", j.InfoHash[:1], r.Outcome, r.Detail,
						r.RetryAfter, r.AttemptedAt, r.PeersTried, r.PeerFailures)
				}
			}
		})
	}
}
