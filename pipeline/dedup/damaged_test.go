package dedup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestDamagedStateFileNamesItOnly: a damaged page in a state file that
// dedup splices is named in the error by its path in the dataset, and
// the staged output it was copying into is not named at all.
func TestDamagedStateFileNamesItOnly(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	obs := genObs(11, 20000, 20000)
	if _, err := run(t, data, nil, writeObs(t, dir, obs)); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	st := m.Table(dataset.TableState)
	key := st.PartitionKeys()[0]
	victim := d.FilePath(st, key, st.Partitions[key][0])
	b, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+60; i++ { // a page of a column after info_hash, clear of the footer
		b[i] ^= 0x55
	}
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	again := make([]schema.Observation, len(obs))
	copy(again, obs)
	for i := range again {
		again[i].ObservedAt += 1000 // other bytes, the same hashes: every partition is spliced
	}
	_, err = run(t, data, nil, writeObs(t, dir, again))
	if err == nil {
		t.Fatal("dedup read a damaged state file")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "dedup: partition "+key+": "+victim+": ") || strings.Contains(msg, "staging") || strings.Count(msg, ".parquet") != 1 {
		t.Fatalf("error %q, want it to name %s only", msg, victim)
	}
}
