package merge

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestLiveSpoolIsNoLeftover: a merge whose stdin is spooled but not
// committed yet (it waits for the writer lock, held here) keeps its
// spool locked: a merge starting meanwhile does not take it for a dead
// run's leftover (Spool dropped the lock on return, and the scan did not
// look at it: both applied it, and the owner then failed, exit 2, on the
// spool the other had removed), and the owner then commits it.
func TestLiveSpoolIsNoLeftover(t *testing.T) {
	ctx := context.Background()
	h, g := hashAt(0x42, 1), hashAt(0x43, 1)
	dir := makeDataset(t, []schema.State{newHash(h, t0), newHash(g, t0)})
	jobs := planJobs(t, dir, t0, 2)
	var stdin bytes.Buffer
	aw := rowio.NewArrowWriter[schema.Result]("stdin", &stdin)
	if err := aw.Write([]schema.Result{failure(jobs[0], schema.OutcomeNoPeers, t0+minute)}); err != nil {
		t.Fatal(err)
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}

	lk, err := dataset.LockWriter(ctx, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	owner := make(chan error, 1)
	go func() {
		o := DefaultOptions()
		o.Data, o.Now, o.Inputs = dir, tm(t0+2*minute), []string{"-"}
		o.Stdin, o.LockWait = &stdin, time.Hour
		_, err := Run(ctx, o)
		owner <- err
	}()
	var spool string
	for range 6000 {
		if got, _ := filepath.Glob(filepath.Join(dir, inboxDir, "part-*.results")); len(got) == 1 {
			spool = got[0]
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if spool == "" {
		t.Fatal("the merge did not spool its stdin")
	}

	d, err := dataset.Open(ctx, dir, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := writeResults(t, []schema.Result{failure(jobs[1], schema.OutcomeNoPeers, t0+minute)})
	ins, err := resolveInputs(context.Background(), d, []string{other}, nil)
	if err != nil {
		t.Fatal(err)
	}
	releaseAll(ins)
	if spooled(ins, spool) {
		lk.Release()
		<-owner // its run ends before the test removes its folder
		t.Fatalf("a starting merge took the live merge's spool %s for a leftover: inputs %v", spool, ins)
	}
	lk.Release()
	if err := <-owner; err != nil {
		t.Fatalf("the spool's merge: %v", err)
	}
	if _, err := os.Stat(spool); !os.IsNotExist(err) {
		t.Fatalf("the spool's merge left its spool: %v", err)
	}
	if got := stateOf(t, dir)[jobs[0].InfoHash]; got.Attempts != 1 {
		t.Fatalf("stdin's result was not applied once: %+v", got)
	}
}
