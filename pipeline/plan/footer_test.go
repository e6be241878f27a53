package plan

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestPlanRefusesDamagedNullCount: one flipped bit in a state file's
// footer that makes info_hash_v2's null count equal the row count used to
// make plan-retries take the column as all null (statecol.AllNull) and
// plan the v2 hashes without their full hash, exit 0. The footer's
// checksum in the manifest now catches it: plan-retries fails naming the
// file, writes no jobs and commits nothing.
func TestPlanRefusesDamagedNullCount(t *testing.T) {
	// 20 rows, 4 with a full v2 hash: a null count of 16, zigzag 0x20,
	// one bit (0x08) away from 20's 0x28.
	var states []schema.State
	for i := range 20 {
		st := newHash(hashAt(0x01, uint64(i+1)), ms(t0))
		if i%5 == 0 {
			st.HashType, st.InfoHashV2 = schema.HashV2, v2Of(st.InfoHash)
		}
		states = append(states, st)
	}
	dir := makeDataset(t, states, nil)
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
	flipNullCount(t, path, "info_hash_v2", 16, 20)
	before := currentOf(t, dir)

	o := DefaultOptions()
	o.Data, o.Now, o.Limit = dir, time.UnixMilli(ms(t0)+day).UTC(), 100
	o.Output = filepath.Join(t.TempDir(), "jobs.parquet")
	_, err = Run(context.Background(), o)
	want := "plan-retries: dataset: " + path + ": footer CRC-32C "
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), path) != 1 || strings.Contains(err.Error(), "\n") {
		t.Fatalf("plan-retries: %v\nwant one line %s…", err, want)
	}
	if _, err := os.Stat(o.Output); err == nil {
		t.Error("plan-retries wrote jobs")
	}
	if after := currentOf(t, dir); after != before {
		t.Errorf("committed %s over %s", after, before)
	}
}

// flipNullCount flips the one bit of the Parquet file at path that turns
// column col's null count in its first row group from was to to, found by
// decoding the footer with each candidate byte flipped (and checking that
// nothing else of the footer changed).
func flipNullCount(t *testing.T, path, col string, was, to int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	start := len(b) - 8 - n
	nulls := func(b []byte) (int64, bool) {
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)), parquet.SkipPageIndex(true))
		if err != nil {
			return 0, false
		}
		for _, c := range pf.Metadata().RowGroups[0].Columns {
			if strings.Join(c.MetaData.PathInSchema, ".") == col {
				return c.MetaData.Statistics.NullCount, true
			}
		}
		return 0, false
	}
	if got, ok := nulls(b); !ok || got != was {
		t.Fatalf("%s: %s null count %d, want %d", path, col, got, was)
	}
	mask := byte((was ^ to) << 1) // zigzag: 2n
	for off := start; off < len(b)-8; off++ {
		if b[off] != byte(was<<1) {
			continue
		}
		b[off] ^= mask
		if got, ok := nulls(b); ok && got == to {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		b[off] ^= mask
	}
	t.Fatalf("%s: no byte of the footer is %s's null count", path, col)
}

func currentOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
