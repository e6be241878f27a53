package export

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
)

// TestDamagedDatasetWritesNothingToStdout: a state file missing or cut
// short in a partition after the first fails an export to stdout before
// its first byte, naming the file, rather than after the partitions
// before it went out (a whole-looking CSV or JSON Lines stream, only
// shorter).
func TestDamagedDatasetWritesNothingToStdout(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(path string) error
		want   string
	}{
		{"missing", os.Remove, "no such file or directory"},
		{"truncated", func(p string) error { return os.Truncate(p, 100) }, "damaged"},
	} {
		for _, format := range []string{"csv", "jsonl", "parquet"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				data, _, path := fixtureLastState(t)
				if err := tt.damage(path); err != nil {
					t.Fatal(err)
				}
				defer func(n int) { sinkBuffer = n }(sinkBuffer)
				sinkBuffer = 16 // the first partition reaches stdout at once
				var out bytes.Buffer
				o := DefaultOptions()
				o.Data, o.Format, o.Stdout = data, format, &out
				_, err := Run(context.Background(), o)
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want one naming %s and %q", err, path, tt.want)
				}
				if tt.name == "missing" && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("error %v is not fs.ErrNotExist", err)
				}
				if out.Len() != 0 {
					t.Errorf("%d bytes went to stdout before the error: %.200q", out.Len(), out.Bytes())
				}
			})
		}
	}
}

// TestDamageFoundAfterOutputBeganSaysSo: damage that keeps a file's size
// and footer (a page altered in place) is found only when its partition
// is read; by then earlier partitions may have gone to stdout, and the
// error says that output is incomplete, as for a collected snapshot.
func TestDamageFoundAfterOutputBeganSaysSo(t *testing.T) {
	data, last, path := fixtureLastState(t)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 64), 4); err != nil { // the first page header, after "PAR1"
		t.Fatal(err)
	}
	f.Close()
	defer func(n int) { sinkBuffer = n }(sinkBuffer)
	sinkBuffer = 16 // the first partition reaches stdout at once
	var out bytes.Buffer
	o := DefaultOptions()
	o.Data, o.Format, o.Stdout = data, "csv", &out
	_, err = Run(context.Background(), o)
	if out.Len() == 0 {
		t.Fatalf("nothing reached stdout (error %v): the test does not test what it means to", err)
	}
	if err == nil || !strings.Contains(err.Error(), "partition "+last) || !strings.Contains(err.Error(), "the output on stdout is incomplete") {
		t.Fatalf("error %v, want one naming partition %s and saying the output on stdout is incomplete", err, last)
	}
}

// fixtureLastState is a fixture dataset, its last state partition (the
// one an export reads last) and the path of that partition's file.
func fixtureLastState(t *testing.T) (data, last, path string) {
	t.Helper()
	data, _ = fixture(t)
	d, err := dataset.OpenReadOnly(data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Current()
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	st := m.Table(dataset.TableState)
	keys := st.PartitionKeys()
	last = keys[len(keys)-1]
	return data, last, filepath.Join(data, st.PartitionDir(last), st.Partitions[last][0].Name)
}
