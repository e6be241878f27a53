package fetch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestRunReleasesLeases: a run that stops (deadline or interrupt) over
// more jobs than it can start writes a released row for every leased job
// it read and did not attempt (abandoned in flight, never started, or
// read after the stop), carrying the job's identity and lease and no
// peer data nor timings (null: no stage ran); a job
// without a lease and one whose lease had passed get none, and the counts
// add up.
func TestRunReleasesLeases(t *testing.T) {
	tor := badpeers.NewTorrent(17, 1, 5)
	good := startPeer(t, badpeers.Good, tor)
	stall := startPeer(t, badpeers.Stall)
	future := time.Now().Add(2 * time.Hour).UnixMilli()
	jobs := []schema.Job{{InfoHash: tor.InfoHash, HashType: schema.HashV1, Attempt: 1, LeaseID: "L1",
		LeaseUntil: future, Peers: []string{good.Addr()}}}
	for i := range 600 { // more than one read of the input
		jobs = append(jobs, schema.Job{InfoHash: schema.Hash{0xd0, byte(i >> 8), byte(i)}, HashType: int8(1 + i%2),
			Attempt: int32(1 + i%3), LeaseID: "L1", LeaseUntil: future, Peers: []string{stall.Addr()}})
	}
	unleased := schema.Job{InfoHash: schema.Hash{0xd1}, Peers: []string{stall.Addr()}}
	expired := schema.Job{InfoHash: schema.Hash{0xd2}, HashType: schema.HashV1, LeaseID: "L0",
		LeaseUntil: time.Now().Add(-time.Minute).UnixMilli(), Peers: []string{stall.Addr()}}
	jobs = append(jobs[:300], append([]schema.Job{unleased}, jobs[300:]...)...)
	jobs = append(jobs, expired)
	leased := len(jobs) - 2 // all but the unleased and the expired one

	tests := []struct {
		name     string
		stdin    bool
		deadline bool // the deadline passes once both workers stall, else an interrupt comes then
		want     int
	}{
		{"deadline", false, true, exitcode.Partial},
		{"interrupt", false, false, exitcode.Interrupted},
		{"deadline stdin", true, true, exitcode.Partial},
		{"interrupt stdin", true, false, exitcode.Interrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "out.parquet")
			o := testOptions()
			if tt.stdin {
				in, o.Stdin = "-", jobStream(t, jobs)
			} else {
				writeRows(t, in, jobs)
			}
			o.Input, o.Output = in, out
			o.PeerTimeout, o.Concurrency = backstop, 2 // the stalls end only by the stop
			ctx := stopWhenBusy(t, &o, stall, tt.deadline)
			start := time.Now()
			st, err := Run(ctx, o)
			if exitcode.Of(err) != tt.want {
				t.Fatalf("err %v (exit %d), want exit %d", err, exitcode.Of(err), tt.want)
			}
			if !strings.Contains(err.Error(), "leases released") {
				t.Errorf("error %q does not say how many leases were released", err)
			}
			res := readResults(t, out)
			if r := res[tor.InfoHash]; r.Outcome != schema.OutcomeOK {
				t.Fatalf("the good job: %q, want ok", r.Outcome)
			}
			why := map[string]int{}
			for _, j := range jobs[1:] {
				r, ok := res[j.InfoHash]
				switch {
				case j.InfoHash == unleased.InfoHash || j.InfoHash == expired.InfoHash:
					if ok {
						t.Errorf("%x (lease %q) has a %s row, want none", j.InfoHash, j.LeaseID, r.Outcome)
					}
					continue
				case !ok:
					t.Errorf("leased job %x has no row", j.InfoHash)
					continue
				}
				if r.Outcome != schema.OutcomeReleased || r.LeaseID != j.LeaseID || r.HashType != j.HashType ||
					r.Attempt != j.Attempt || r.AttemptedAt < start.UnixMilli() || r.AttemptedAt > time.Now().UnixMilli() ||
					len(r.PeerFailures) != 0 || r.PeersFound != 0 || r.PeersTried != 0 || r.InfoBytes != nil || r.ServedBy != "" ||
					r.LookupMs != nil || r.ConnectMs != nil || r.MetadataMs != nil || r.TotalMs != nil ||
					r.HandshakeMs != nil || r.ExtensionMs != nil || r.VerifyMs != nil {
					t.Fatalf("row of %x: %+v, want a released row with the job's lease %q", j.InfoHash, r, j.LeaseID)
				}
				why[strings.SplitN(r.Detail, ":", 2)[0]]++
			}
			if len(res) != leased || why["abandoned in flight"] == 0 || why["not started"] == 0 {
				t.Errorf("%d rows (want %d); released as %v, want some abandoned in flight, some not started", len(res), leased, why)
			}
			if st.Jobs != int64(len(jobs)) || st.Attempted != 1 || st.LeaseExpired != 1 ||
				st.Released != int64(leased-1) || st.Unfinished != st.Released+1 ||
				st.Jobs != st.Attempted+st.LeaseExpired+st.Unfinished {
				t.Errorf("stats: %d jobs, %d attempted, %d lease expired, %d unfinished, %d released; want %d jobs, 1, 1, %d, %d",
					st.Jobs, st.Attempted, st.LeaseExpired, st.Unfinished, st.Released, len(jobs), leased, leased-1)
			}
			if _, in := st.Outcomes[schema.OutcomeReleased]; in || st.Outcomes[schema.OutcomeOK] != 1 {
				t.Errorf("outcomes %v: want the attempt's ok only (released rows are no attempt)", st.Outcomes)
			}
		})
	}
}

// fullWriter fails every write as a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestFailedOutputReleasesNothing: a run stopped by its deadline whose
// output cannot be written (a full disk) gives back no lease, and says
// so: Released counts only released rows the output kept (none here, the
// disk full from the start), so that its summary does not claim leases
// released that wait for lease_until. Unfinished still counts the jobs it
// did not finish.
func TestFailedOutputReleasesNothing(t *testing.T) {
	stall := startPeer(t, badpeers.Stall)
	future := time.Now().Add(2 * time.Hour).UnixMilli()
	var jobs []schema.Job
	for i := range 40 {
		jobs = append(jobs, schema.Job{InfoHash: schema.Hash{0xd3, byte(i)}, HashType: schema.HashV1, Attempt: 1,
			LeaseID: "L1", LeaseUntil: future, Peers: []string{stall.Addr()}})
	}
	for _, tt := range []struct {
		name   string
		output string // "-": an Arrow stream on a full stdout
	}{
		{"arrow stream", "-"},
		{"parquet on a full device", "/dev/full"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.output != "-" {
				if f, err := os.OpenFile(tt.output, os.O_WRONLY, 0); err != nil {
					t.Skipf("no %s: %v", tt.output, err)
				} else {
					f.Close()
				}
			}
			in := filepath.Join(t.TempDir(), "jobs.parquet")
			writeRows(t, in, jobs)
			o := testOptions()
			o.Input, o.Output, o.Stdout = in, tt.output, fullWriter{}
			o.PeerTimeout, o.Concurrency = backstop, 2 // the stalls end only by the stop
			st, err := Run(stopWhenBusy(t, &o, stall, true), o)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("error %v; want the output's ENOSPC", err)
			}
			if st.Released != 0 || st.Unfinished != int64(len(jobs)) {
				t.Errorf("%d released, %d unfinished; want 0 released (nothing was written), %d unfinished",
					st.Released, st.Unfinished, len(jobs))
			}
		})
	}
}
