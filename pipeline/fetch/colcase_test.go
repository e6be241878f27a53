package fetch

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestJobsColumnCase: a jobs file whose info_hash is named INFO_HASH (as
// DuckDB matches names, case-insensitively) is read as its info_hash,
// FIXED_LEN_BYTE_ARRAY or BLOB alike; a LIST named info_hash is refused
// saying so, not as a missing column, as is a bare REPEATED column.
func TestJobsColumnCase(t *testing.T) {
	type fixedUpper struct {
		InfoHash schema.Hash `parquet:"INFO_HASH"`
		LeaseID  string      `parquet:"Lease_ID,optional"`
	}
	type blobUpper struct {
		InfoHash []byte `parquet:"Info_Hash"`
	}
	type list struct {
		InfoHash [][]byte `parquet:"info_hash,list"`
	}
	type repeated struct { // a bare repeated leaf: parquet-go read each row's first hash
		InfoHash [][20]byte `parquet:"info_hash"`
	}
	type repeatedLease struct {
		InfoHash schema.Hash `parquet:"info_hash"`
		LeaseID  []string    `parquet:"lease_id"`
	}
	h := schema.Hash{7, 1}
	dir := t.TempDir()
	tests := []struct {
		name    string
		write   func(path string) error
		wantErr string
	}{
		{"FIXED INFO_HASH", func(p string) error { return writeJobsFile(p, []fixedUpper{{h, "L1"}}) }, ""},
		{"BLOB Info_Hash", func(p string) error { return writeJobsFile(p, []blobUpper{{h[:]}}) }, ""},
		{"a LIST info_hash", func(p string) error { return writeJobsFile(p, []list{{[][]byte{h[:]}}}) },
			`column "info_hash" is a LIST, want FIXED_LEN_BYTE_ARRAY(20), BLOB or hex VARCHAR`},
		{"a REPEATED info_hash", func(p string) error { return writeJobsFile(p, []repeated{{[][20]byte{h, {8}}}}) },
			`column "info_hash" is REPEATED, want FIXED_LEN_BYTE_ARRAY(20), BLOB or hex VARCHAR`},
		{"a REPEATED lease_id", func(p string) error { return writeJobsFile(p, []repeatedLease{{h, []string{"a", "b"}}}) },
			`column "lease_id" is REPEATED, want one value a row`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".parquet")
			if err := tt.write(path); err != nil {
				t.Fatal(err)
			}
			jr, err := openJobs(path, nil, "")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "missing") {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer jr.Close()
			buf := make([]jobRow, 2)
			n, _ := jr.Read(buf)
			if n != 1 || buf[0].InfoHash != h {
				t.Fatalf("read %d jobs %v, want one of %x", n, buf[:n], h)
			}
		})
	}
}

func writeJobsFile[T any](path string, rows []T) error {
	w, err := rowio.Create[T](path, nil)
	if err != nil {
		return err
	}
	if err := w.Write(rows); err != nil {
		return err
	}
	return w.Close()
}
