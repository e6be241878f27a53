package status

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestDamagedStateFileNamedOnce: status (without --verify) fails on a
// damaged state file with an error that names the file once, whether
// opening it fails (a truncated file) or reading a column does (a flipped
// byte in a page's data).
func TestDamagedStateFileNamedOnce(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string // with {path} for the file
	}{
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 100); err != nil {
				t.Fatal(err)
			}
		}, "partition 00: dataset: {path}: 100 bytes, shorter than the "}, // the footer the manifest records
		{"a byte of a page", func(t *testing.T, p string) { datasettest.FlipLastByteOf(t, p, "next_retry") },
			"partition 00: {path}: next_retry: crc32 checksum mismatch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			fi, err := dataset.WriteStaged(tx, dataset.TableState, "00",
				[]schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "failed", Tier: "hot", NextRetry: 12345}})
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(dataset.TableState, "00", []dataset.FileInfo{fi})
			m, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"})
			if err != nil {
				t.Fatal(err)
			}
			st := m.Table(dataset.TableState)
			path := d.FilePath(st, "00", st.Partitions["00"][0])
			tt.damage(t, path)
			_, err = Run(context.Background(), d.Dir, now, Options{})
			if err == nil {
				t.Fatal("counted a damaged state file")
			}
			got := err.Error()
			if want := strings.ReplaceAll(tt.want, "{path}", path); !strings.Contains(got, want) || strings.Count(got, path) != 1 {
				t.Fatalf("error %q\nwant …%q…, with the path once", got, want)
			}
		})
	}
}
