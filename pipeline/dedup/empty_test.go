package dedup

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
)

// TestFirstRowsIntoAnEmptyState: when the state is only the 0-row file a
// commit gives an empty table (the dataset's first commit held no
// sightings), dedup counts the hashes of its partition as surely new, as
// for a partition without files, not as Bloom positives that the exact
// store then finds false; and the commit drops the 0-row file.
func TestFirstRowsIntoAnEmptyState(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	m, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"})
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st := m.Table(dataset.TableState); len(st.Partitions["00"]) != 1 || st.Rows() != 0 {
		t.Fatalf("state %v, want the 0-row file in partition 00", st.Partitions)
	}
	obs := genObs(7, 3000, 2500)
	st, err := run(t, data, nil, writeObs(t, dir, obs))
	if err != nil {
		t.Fatal(err)
	}
	if st.BloomNegatives != st.New || st.BloomPositives != 0 || st.FalsePositives != 0 {
		t.Errorf("new %d, Bloom negatives %d, positives %d, false positives %d: want every hash a negative",
			st.New, st.BloomNegatives, st.BloomPositives, st.FalsePositives)
	}
	compare(t, readState(t, data), truth(obs))
	d, err = dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if m, err = d.Current(); err != nil {
		t.Fatal(err)
	}
	for key, files := range m.Table(dataset.TableState).Partitions {
		for _, f := range files {
			if f.Rows == 0 {
				t.Errorf("partition %s keeps a 0-row file, %s", key, f.Name)
			}
		}
	}
}
