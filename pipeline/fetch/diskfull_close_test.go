package fetch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestFetchFullDiskThenNotKept: when a full disk stopped the run but the
// file then cannot be published after all (here its temporary name was
// removed, so the rename fails), nothing is kept: the run fails (exit 1)
// and, as for any output not kept, its stats count no leases released
// (the released rows went with the file). Re-executed on a 4 MiB tmpfs
// in a private mount namespace, as TestFetchKeepsWhatFitsOnAFullDisk.
func TestFetchFullDiskThenNotKept(t *testing.T) {
	mnt := os.Getenv(tmpfsEnv)
	if mnt == "" {
		dir := t.TempDir()
		if out, err := exec.Command("unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a tmpfs in a private mount namespace (unshare -m needs root): %v: %s", err, out)
		}
		cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
			`mount -t tmpfs -o size=4m tmpfs "$`+tmpfsEnv+`" && exec "$0" -test.run='^TestFetchFullDiskThenNotKept$' -test.v -test.count=1`, os.Args[0])
		cmd.Env = append(os.Environ(), tmpfsEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("in the mount namespace: %v\n%s", err, out)
		}
		t.Logf("in the mount namespace:\n%s", out)
		return
	}
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	var tors []badpeers.Torrent
	for i := range 48 {
		tors = append(tors, badpeers.NewTorrent(uint64(100+i), 1, 5000))
	}
	good := startPeer(t, badpeers.Good, tors...)
	stall := startPeer(t, badpeers.Stall)
	future := time.Now().Add(2 * time.Hour).UnixMilli()
	var jobs []schema.Job
	for _, tor := range tors {
		jobs = append(jobs, schema.Job{InfoHash: tor.InfoHash, HashType: schema.HashV1, Attempt: 1, LeaseID: "L1",
			LeaseUntil: future, Peers: []string{good.Addr()}})
	}
	for i := range 300 { // never started: released at the stop
		jobs = append(jobs, schema.Job{InfoHash: schema.Hash{0xd5, byte(i >> 8), byte(i)}, HashType: schema.HashV1,
			Attempt: 1, LeaseID: "L1", LeaseUntil: future, Peers: []string{stall.Addr()}})
	}
	in, out := filepath.Join(t.TempDir(), "jobs.parquet"), filepath.Join(mnt, "results.parquet")
	writeRows(t, in, jobs)
	// The temporary file loses its name as soon as it has one: its
	// blocks stay (it is open), so the disk still fills, but the rename
	// into place fails.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			ents, _ := os.ReadDir(mnt)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".tmp-results.parquet-") {
					os.Remove(filepath.Join(mnt, e.Name()))
				}
			}
		}
	}()
	o := testOptions()
	o.Input, o.Output = in, out
	o.PeerTimeout, o.Concurrency = backstop, 4
	st, err := runGuarded(t, context.Background(), o)
	if err == nil || exitcode.Of(err) == exitcode.Partial || errors.Is(err, rowio.ErrOutputFull) {
		t.Fatalf("err %v (exit %d); want the failed publication (exit 1)", err, exitcode.Of(err))
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Fatalf("%s exists; want nothing kept", out)
	}
	if st.Unfinished == 0 {
		t.Fatalf("no job left unfinished: the full disk did not stop the run (%v)", err)
	}
	if st.Released != 0 {
		t.Errorf("stats count %d leases released; the file that held their rows was not kept (%v)", st.Released, err)
	}
	t.Logf("%v", err)
}
