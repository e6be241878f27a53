package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
)

// TestUnionSharedInputKeepsLargerAndMarksTheirsApplied walks what README
// says of merge --from when the two histories share an input: each hash
// keeps the larger seen_count (so sightings only the other side applied
// can be missing), and the other side's own inputs become already applied
// here, so applying one of them afterwards changes nothing.
func TestUnionSharedInputKeepsLargerAndMarksTheirsApplied(t *testing.T) {
	dir := t.TempDir()
	h := hashAt(0x5a, 1)
	input := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%s\n# %s\n", schema.Hex(h), name)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shared, mine, theirs := input("shared.txt"), input("mine.txt"), input("theirs.txt")
	apply := func(data string, inputs ...string) dedup.Stats {
		t.Helper()
		o := dedup.DefaultOptions()
		o.Data, o.Inputs, o.Now = data, inputs, tm(t0)
		st, err := dedup.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	apply(a, shared, mine)   // h seen twice
	apply(b, shared, theirs) // h seen twice
	st := runFromT(t, a, b, t0+hour)
	if st.Union.Additive {
		t.Fatal("the histories share an input, yet the counts were added")
	}
	// Three inputs sighted h once each; the larger count, 2, is kept.
	if got := stateOf(t, a)[h].SeenCount; got != 2 {
		t.Fatalf("seen_count %d after the union, want the larger of 2 and 2", got)
	}
	if st := apply(a, theirs); st.InputsSkipped != 1 || st.Commits != 0 {
		t.Fatalf("applying the other side's own input again: %+v, want already applied, nothing committed", st)
	}
	if got := stateOf(t, a)[h].SeenCount; got != 2 {
		t.Fatalf("seen_count %d, want it left at 2", got)
	}
}
