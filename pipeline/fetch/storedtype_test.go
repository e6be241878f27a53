package fetch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
)

// TestJobsTimestampStoredAsInt32: a jobs file whose lease_until is a
// TIMESTAMP (or TIMESTAMP_MILLIS) stored as an INT32 is a wrong schema
// saying so, in one line, as dedup says it of observed_at (Run makes
// every openJobs error exit 2); fetch read the column as INT64s and
// failed with "corrupt Parquet: ... cannot decode INT64 from input of
// size 4" at its first read.
func TestJobsTimestampStoredAsInt32(t *testing.T) {
	type fixed struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		LeaseID    string      `parquet:"lease_id"`
		LeaseUntil int32       `parquet:"lease_until"`
	}
	type blob struct {
		InfoHash   []byte `parquet:"info_hash"`
		LeaseID    string `parquet:"lease_id"`
		LeaseUntil int32  `parquet:"lease_until"`
	}
	h := schema.Hash{7, 2}
	dir := t.TempDir()
	const want = `: wrong schema: column "lease_until" is TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS) stored as INT32, want a TIMESTAMP (INT64)`
	for _, tt := range []struct {
		name      string
		write     func(path string) error
		converted bool
	}{
		{"FIXED info_hash", func(p string) error { return writeJobsFile(p, []fixed{{h, "L1", 1000}}) }, false},
		{"FIXED info_hash, TIMESTAMP_MILLIS", func(p string) error { return writeJobsFile(p, []fixed{{h, "L1", 1000}}) }, true},
		{"BLOB info_hash", func(p string) error { return writeJobsFile(p, []blob{{h[:], "L1", 1000}}) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plain := filepath.Join(dir, "plain.parquet")
			if err := tt.write(plain); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(plain)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "jobs.parquet")
			if err := os.WriteFile(path, rowiotest.EditFooter(t, b, rowiotest.Int32Timestamp(t, tt.converted, "lease_until")), 0o644); err != nil {
				t.Fatal(err)
			}
			jr, err := openJobs(path, nil, "")
			if err == nil {
				defer jr.Close()
				n, rerr := jr.Read(make([]jobRow, 2))
				t.Fatalf("opened; read %d jobs, err %v", n, rerr)
			}
			if err.Error() != path+want {
				t.Fatalf("err = %v\nwant %q", err, path+want)
			}
		})
	}
}
