package merge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
)

// TestLedgerIDsByStage pins the ledger id each stage records (see
// dataset.Applied): dedup's xxh3-128 of the input's bytes (32 hex
// digits), merge's SHA-256 (64), merge --from's "dataset:" and the other
// manifest's SHA-256. One ledger holds ids of every length, and each
// stage finds its own input there: applying it again is a no-op. A change
// of a stage's checksum would make the inputs older builds recorded
// apply twice, and merge --from miss the inputs two datasets share.
func TestLedgerIDsByStage(t *testing.T) {
	dir := makeDataset(t, []schema.State{newHash(hashAt(0x30, 1), t0)})
	list := filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(list, []byte(schema.Hex(hashAt(0x31, 2))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs := planJobs(t, dir, t0, 1)
	results := writeResults(t, []schema.Result{failure(jobs[0], schema.OutcomeNoPeers, t0+minute)})
	other := makeDataset(t, []schema.State{newHash(hashAt(0x40, 3), t0)})

	runDedup := func() dedup.Stats {
		t.Helper()
		o := dedup.DefaultOptions()
		o.Data, o.Inputs, o.Now = dir, []string{list}, tm(t0+2*minute)
		st, err := dedup.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	runDedup()
	runMerge(t, dir, t0+3*minute, results)
	runFromT(t, dir, other, t0+4*minute)

	hexOf := func(b []byte) string { return hex.EncodeToString(b) }
	bytesOf := func(p string) []byte {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	x := xxh3.Hash128(bytesOf(list)).Bytes()
	s := sha256.Sum256(bytesOf(results))
	om := datasettest.Current(t, other)
	m := sha256.Sum256(bytesOf(filepath.Join(other, "manifests", fmt.Sprintf("%012d.json", om.Snapshot))))
	want := map[string]string{
		list:    hexOf(x[:]),
		results: hexOf(s[:]),
		"merge --from " + other + fmt.Sprintf(" (snapshot %d)", om.Snapshot): "dataset:" + hexOf(m[:]),
	}

	d, cur := datasettest.OpenCurrent(t, dir)
	entries, err := d.LedgerEntries(cur)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Name] = e.ID
	}
	for name, id := range want {
		if got[name] != id {
			t.Errorf("ledger id of %s: %q, want %q", name, got[name], id)
		}
	}
	if len(got) != len(want) {
		t.Errorf("ledger %v, want %v", got, want)
	}

	if st := runDedup(); st.InputsSkipped != 1 || st.Commits != 0 {
		t.Errorf("dedup of its input again: %d skipped, %d commits; want 1, 0", st.InputsSkipped, st.Commits)
	}
	if st := runMerge(t, dir, t0+5*minute, results); st.InputsSkipped != 1 || st.Results != 0 {
		t.Errorf("merge of its input again: %d skipped, %d results; want 1, 0", st.InputsSkipped, st.Results)
	}
	if st := runFromT(t, dir, other, t0+6*minute); !st.Union.AlreadyMerged {
		t.Errorf("merge --from the same snapshot again: not already merged")
	}
}
