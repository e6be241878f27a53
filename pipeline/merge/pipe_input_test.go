package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestPipeNamedAsInput: a results input named by path that is a pipe
// ("merge <(fetch ... -o -)" names /dev/fd/63) is read more than once
// (checksummed, then decoded), so the reads after the first found it
// drained and the run failed blaming the content. It is spooled like
// stdin and applied, and the spool is gone once applied.
func TestPipeNamedAsInput(t *testing.T) {
	h := hashAt(0x42, 1)
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	j := planJobs(t, dir, t0, 1)[0]
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		aw := rowio.NewArrowWriter[schema.Result]("pipe", w)
		err := aw.Write([]schema.Result{failure(j, schema.OutcomeNoPeers, t0+minute)})
		if err == nil {
			err = aw.Close()
		}
		w.Close()
		done <- err
	}()
	_, err = tryMerge(dir, t0+2*minute, fmt.Sprintf("/proc/self/fd/%d", r.Fd()))
	r.Close() // a writer still blocked on a full pipe gets EPIPE
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, dir)[h]; got.Attempts != 1 || got.LastFailure != schema.OutcomeNoPeers {
		t.Fatalf("the result was not applied: %+v", got)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, inboxDir))
	for _, e := range ents {
		t.Errorf("left in the inbox: %s", e.Name())
	}
}
