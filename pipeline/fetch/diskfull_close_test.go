package fetch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestFetchFullDiskThenNotKept: when a full disk stopped the run but the
// file then cannot be published after all (here its temporary name was
// removed, so the rename fails), nothing is kept: the run fails (exit 1)
// and, as for any output not kept, its stats count no leases released
// (the released rows went with the file). Re-executed on a 4 MiB tmpfs
// in a private mount namespace, as TestFetchKeepsWhatFitsOnAFullDisk.
func TestFetchFullDiskThenNotKept(t *testing.T) {
	mnt := fullishTmpfs(t)
	if mnt == "" {
		return
	}
	_, jobs := fullDiskJobs(t, 0)
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
