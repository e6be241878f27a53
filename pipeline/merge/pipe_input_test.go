package merge

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestPipeNamedAsInputIsRefused: a results input named by path that is
// a pipe ("merge <(fetch ... -o -)" names /dev/fd/63) is read more than
// once (checksummed, then decoded), so the reads after the first found it
// drained. It is refused up front as bad input; - (stdin) is spooled.
func TestPipeNamedAsInputIsRefused(t *testing.T) {
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
	if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v, want bad input: not a regular file", err)
	}
	if got := stateOf(t, dir)[h]; got.Attempts != 0 {
		t.Fatalf("the result was applied: %+v", got)
	}
}
