package fetch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
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
	o := testOptions()
	// The temporary file loses its name as soon as it is created, before
	// the run writes a row: its blocks stay (it is open), so the disk
	// still fills, but the rename into place fails. (A goroutine that
	// removed it every millisecond raced the run's publication.)
	o.OpenOutput = func(path string) (*fsutil.File, error) {
		f, err := fsutil.CreateOutput(path)
		if err == nil && !f.InPlace() {
			err = os.Remove(f.Name())
		}
		return f, err
	}
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
