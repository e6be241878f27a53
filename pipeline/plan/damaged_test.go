package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestDamagedStateFileNamedOnce: plan-retries fails on a damaged state
// file with an error that names the file once, whether opening it fails
// (a truncated file) or reading a column does (a flipped byte in a page's
// data: the page CRC-32 that README promises).
func TestDamagedStateFileNamedOnce(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string // with {path} for the file
	}{
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 100); err != nil {
				t.Fatal(err)
			}
		}, "plan-retries: dataset: {path}: 100 bytes, shorter than the "}, // the footer the manifest records
		{"a byte of a page", func(t *testing.T, p string) { datasettest.FlipLastByteOf(t, p, "info_hash") },
			"plan-retries: {path}: info_hash: crc32 checksum mismatch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(0x01, 1), ms(t0))}, nil)
			d, err := dataset.OpenReadOnly(dir)
			if err != nil {
				t.Fatal(err)
			}
			m, err := d.Current()
			if err != nil {
				t.Fatal(err)
			}
			st := m.Table(dataset.TableState)
			path := d.FilePath(st, "01", st.Partitions["01"][0])
			d.Close()
			tt.damage(t, path)
			o := DefaultOptions()
			o.Data, o.Now, o.Limit = dir, time.UnixMilli(ms(t0)+day).UTC(), 10
			o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
			_, err = Run(context.Background(), o)
			if err == nil {
				t.Fatal("planned from a damaged state file")
			}
			got := err.Error()
			if want := strings.ReplaceAll(tt.want, "{path}", path); !strings.HasPrefix(got, want) || strings.Count(got, path) != 1 {
				t.Fatalf("error %q\nwant %q…, with the path once", got, want)
			}
		})
	}
}
