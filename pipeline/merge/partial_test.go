package merge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestAppliedPartialLeavesInbox: results a killed run had spooled are set
// aside as DIR/inbox/merge/partial-*, which status lists as not applied.
// Once the operator merges one, it goes (status stopped listing it only
// then); the same bytes merged again, as a crash before the removal
// leaves them, are a no-op that removes them too. A results file merged
// from anywhere else stays where it is.
func TestAppliedPartialLeavesInbox(t *testing.T) {
	h := hashAt(0x42, 1)
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	j := planJobs(t, dir, t0, 1)[0]
	src := writeResults(t, []schema.Result{failure(j, schema.OutcomeNoPeers, t0+minute)})
	content, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(dir, inboxDir)
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(inbox, dataset.PartialPrefix+"part-0a1b.arrow")
	for i, want := range []int{1, 0} { // commits: applied, then already applied
		if err := os.WriteFile(partial, content, 0o644); err != nil {
			t.Fatal(err)
		}
		st := runMerge(t, dir, t0+2*minute, partial)
		if st.InputsSkipped != 1-want {
			t.Fatalf("run %d: %+v", i, st)
		}
		if _, err := os.Stat(partial); !os.IsNotExist(err) {
			t.Fatalf("run %d: the applied partial input is still in the inbox (%v)", i, err)
		}
	}
	if got := stateOf(t, dir)[h]; got.Attempts != 1 {
		t.Fatalf("applied %d times", got.Attempts)
	}
	runMerge(t, dir, t0+3*minute, src)
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("a results file outside the inbox was touched: %v", err)
	}
}
