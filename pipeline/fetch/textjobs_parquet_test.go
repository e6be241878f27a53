package fetch

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// duckTextJob is a job as DuckDB writes a VARCHAR info_hash
// (COPY (SELECT '<40 hex>' AS info_hash) TO 'x.parquet'): BYTE_ARRAY of
// type STRING, optional.
type duckTextJob struct {
	InfoHash string `parquet:"info_hash,optional"`
}

// TestOpenJobsTextHex: a text info_hash column holds hex, as dedup reads
// it: 40 digits (either case) a v1 hash, 64 a full v2 one; any other text
// is bad input naming the row and what it wants.
func TestOpenJobsTextHex(t *testing.T) {
	v1 := strings.Repeat("ab", 20)
	v2 := strings.Repeat("C0", 32)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeRows(t, good, []duckTextJob{{v1}, {v2}})
	rows, _, err := readAllJobs(t, good)
	if err != nil {
		t.Fatal(err)
	}
	wantV1, _, _, _ := schema.ParseHex(v1)
	wantV2, full, _, _ := schema.ParseHex(strings.ToLower(v2))
	if len(rows) != 2 || rows[0].InfoHash != wantV1 || rows[1].InfoHash != wantV2 ||
		rows[1].HashType != schema.HashV2 || string(rows[1].InfoHashV2) != string(full) {
		t.Fatalf("rows %+v; want %s and the v2 hash %s", rows, v1, v2)
	}
	for _, tt := range []struct{ name, value, want string }{
		{"32 digits", strings.Repeat("ab", 16), `row 2: info_hash "` + strings.Repeat("ab", 16) + `" (a STRING column) is not a hex infohash (40 or 64 digits)`},
		{"not hex", strings.Repeat("zz", 20), "(a STRING column) is not a hex infohash"},
		// Quoted as dedup quotes it (schema.Quote): cut to 60 bytes.
		{"long", strings.Repeat("x", 100), `row 2: info_hash "` + strings.Repeat("x", 55) + `"... (a STRING column) is not a hex infohash`},
		{"control bytes", "\x1b[2J" + strings.Repeat("a", 36), `info_hash "\x1b[2J` + strings.Repeat("a", 36) + `" (a STRING column)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.parquet")
			writeRows(t, bad, []duckTextJob{{v1}, {tt.value}})
			_, _, err := readAllJobs(t, bad)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}
