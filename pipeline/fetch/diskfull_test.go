package fetch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// tmpfsEnv names, in the re-executed test process, the folder a 4 MiB
// tmpfs is mounted on (in the child's own mount namespace).
const tmpfsEnv = "INFOHASH_TEST_TMPFS"

// TestFetchKeepsWhatFitsOnAFullDisk: fetch -o FILE whose filesystem fills
// up while results come stops as at a signal: the results that fit and a
// released row for every leased job it did not finish (or whose result
// did not fit) are kept in a valid file renamed into place, and the run
// ends partial (exit 3) saying so. The test re-executes itself in a
// private mount namespace (unshare -m) on a real 4 MiB tmpfs.
func TestFetchKeepsWhatFitsOnAFullDisk(t *testing.T) {
	mnt := fullishTmpfs(t)
	if mnt == "" {
		return
	}
	tors, jobs := fullDiskJobs(t, 2)
	in, out := filepath.Join(t.TempDir(), "jobs.parquet"), filepath.Join(mnt, "results.parquet")
	writeRows(t, in, jobs)
	o := testOptions()
	o.Input, o.Output = in, out
	o.PeerTimeout, o.Concurrency = backstop, 4 // the stalls end only by the stop
	st, err := runGuarded(t, context.Background(), o)
	if exitcode.Of(err) != exitcode.Partial || !errors.Is(err, rowio.ErrOutputFull) || !errors.Is(err, syscall.ENOSPC) ||
		!strings.Contains(err.Error(), "rows kept in "+out) || !strings.Contains(err.Error(), "leases released") {
		t.Fatalf("err %v (exit %d); want exit 3, the full disk, the rows kept in %s and the leases released", err, exitcode.Of(err), out)
	}
	if left, _ := os.ReadDir(mnt); len(left) != 2 {
		t.Errorf("the tmpfs holds %v; want the filler and %s only", left, filepath.Base(out))
	}
	res := readResults(t, out)
	ok, released := 0, 0
	for _, j := range jobs {
		r, found := res[j.InfoHash]
		switch {
		case !found:
			t.Errorf("leased job %x has no row", j.InfoHash)
		case r.Outcome == schema.OutcomeOK && len(r.InfoBytes) > 0:
			ok++
		case r.Outcome == schema.OutcomeReleased && r.LeaseID == j.LeaseID && r.Attempt == j.Attempt:
			released++
		default:
			t.Errorf("job %x: %s row %q", j.InfoHash, r.Outcome, r.Detail)
		}
	}
	if ok == 0 || ok == len(tors) || int64(released) != st.Released || ok+released != len(jobs) {
		t.Errorf("%d ok, %d released rows (stats: %d released) of %d jobs; want some ok, the rest released", ok, released, st.Released, len(jobs))
	}
	// A result refused for lack of room is no attempt: its job is unfinished.
	if st.Jobs != int64(len(jobs)) || st.Attempted != int64(ok) || st.Outcomes[schema.OutcomeOK] != int64(ok) {
		t.Errorf("stats: %d jobs, %d attempted, %d ok; want %d, %d, %d (the rows kept)", st.Jobs, st.Attempted,
			st.Outcomes[schema.OutcomeOK], len(jobs), ok, ok)
	}
	checkIdentity(t, st)
	t.Logf("%d ok, %d released; %v", ok, released, err)
}

// fullishTmpfs returns the folder of a 4 MiB tmpfs with 1 MiB of it taken
// by a file named filler, when the test runs re-executed in a private
// mount namespace (unshare -m). Otherwise it mounts one there, re-executes
// the test (t.Name(), a top-level test) in it, checks that it passed, and
// returns "": the caller then returns. Skipped where unshare -m fails
// (it needs root).
func fullishTmpfs(t *testing.T) string {
	t.Helper()
	mnt := os.Getenv(tmpfsEnv)
	if mnt == "" {
		dir := t.TempDir()
		if out, err := exec.Command("unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a tmpfs in a private mount namespace (unshare -m needs root): %v: %s", err, out)
		}
		cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
			`mount -t tmpfs -o size=4m tmpfs "$`+tmpfsEnv+`" && exec "$0" -test.run='^`+t.Name()+`$' -test.v -test.count=1`, os.Args[0])
		cmd.Env = append(os.Environ(), tmpfsEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("in the mount namespace: %v\n%s", err, out)
		}
		t.Logf("in the mount namespace:\n%s", out)
		return ""
	}
	// 3 MiB of the 4 free; 48 results of ~100 KiB of metadata do not fit.
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	return mnt
}

// fullDiskJobs starts a good peer serving 48 torrents of ~100 KiB of
// metadata and a stalling one, and returns the torrents and the jobs of
// one lease: inFlight jobs (attempt 2) on the stalling peer, in flight
// when the disk fills; one for each torrent on the good peer; and 300 on
// the stalling peer never started (released at the stop).
func fullDiskJobs(t *testing.T, inFlight int) ([]badpeers.Torrent, []schema.Job) {
	t.Helper()
	var tors []badpeers.Torrent
	for i := range 48 {
		tors = append(tors, badpeers.NewTorrent(uint64(100+i), 1, 5000))
	}
	good := startPeer(t, badpeers.Good, tors...)
	stall := startPeer(t, badpeers.Stall)
	future := time.Now().Add(2 * time.Hour).UnixMilli()
	var jobs []schema.Job
	for i := range inFlight {
		jobs = append(jobs, schema.Job{InfoHash: schema.Hash{0xd4, byte(i)}, HashType: schema.HashV1, Attempt: 2,
			LeaseID: "L1", LeaseUntil: future, Peers: []string{stall.Addr()}})
	}
	for _, tor := range tors {
		jobs = append(jobs, schema.Job{InfoHash: tor.InfoHash, HashType: schema.HashV1, Attempt: 1, LeaseID: "L1",
			LeaseUntil: future, Peers: []string{good.Addr()}})
	}
	for i := range 300 {
		jobs = append(jobs, schema.Job{InfoHash: schema.Hash{0xd5, byte(i >> 8), byte(i)}, HashType: schema.HashV1,
			Attempt: 1, LeaseID: "L1", LeaseUntil: future, Peers: []string{stall.Addr()}})
	}
	return tors, jobs
}
