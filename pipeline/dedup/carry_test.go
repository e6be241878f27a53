package dedup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestDamagedCarriedFileNamesTheStage: a commit refused because a file
// it would carry over is damaged fails dedup with one line that starts
// with "dedup: ", as its other errors do (it started "dataset: ").
func TestDamagedCarriedFileNamesTheStage(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	obs := genObs(12, 200, 100)
	if _, err := run(t, data, nil, writeObs(t, dir, obs)); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Current()
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The next input touches one partition; another one's file is cut.
	var again []schema.Observation
	for _, o := range obs {
		if schema.Prefix(o.InfoHash) == schema.Prefix(obs[0].InfoHash) {
			o.ObservedAt += 1000
			again = append(again, o)
		}
	}
	st := m.Table(dataset.TableState)
	var victim string
	for _, key := range st.PartitionKeys() {
		if key != fmt.Sprintf("%02x", schema.Prefix(obs[0].InfoHash)) {
			victim = d.FilePath(st, key, st.Partitions[key][0])
			break
		}
	}
	if err := os.Truncate(victim, 100); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, data, nil, writeObs(t, dir, again))
	if err == nil {
		t.Fatal("dedup committed over a damaged file")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "dedup: ") || !strings.Contains(msg, victim+": 100 bytes") || strings.Contains(msg, "\n") {
		t.Fatalf("error %q: want one line starting with \"dedup: \" naming %s", msg, victim)
	}
}
