package statecol_test

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/internal/exitcode"
)

// intsState is schema.State as another tool may write it, with hash_type
// and attempts of the Go types H and A (parquet-go writes a uint8 to
// uint32 as INT32 with an unsigned INT(n) logical type).
type intsState[H, A any] struct {
	InfoHash         schema.Hash `parquet:"info_hash"`
	InfoHashV2       []byte      `parquet:"info_hash_v2,optional"`
	HashType         H           `parquet:"hash_type"`
	FirstSeen        int64       `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen         int64       `parquet:"last_seen,timestamp(millisecond)"`
	SeenCount        int64       `parquet:"seen_count"`
	LastSource       string      `parquet:"last_source,dict"`
	Activity         float64     `parquet:"activity"`
	MetadataStatus   string      `parquet:"metadata_status,dict"`
	Attempts         A           `parquet:"attempts"`
	LastAttempt      int64       `parquet:"last_attempt,optional,timestamp(millisecond)"`
	LastFailure      string      `parquet:"last_failure,optional,dict"`
	NextRetry        int64       `parquet:"next_retry,optional,timestamp(millisecond)"`
	LeaseID          string      `parquet:"lease_id,optional"`
	LeaseUntil       int64       `parquet:"lease_until,optional,timestamp(millisecond)"`
	Tier             string      `parquet:"tier,dict"`
	BackoffStep      int32       `parquet:"backoff_step"`
	BadMetadata      int32       `parquet:"bad_metadata"`
	Reactivated      int64       `parquet:"reactivated_at,optional,timestamp(millisecond)"`
	AvoidPeers       []string    `parquet:"avoid_peers,list"`
	Peers            []string    `parquet:"peers,list"`
	FirstSource      string      `parquet:"first_source,optional,dict"`
	LastFailureAt    int64       `parquet:"last_failure_at,optional,timestamp(millisecond)"`
	PeersAt          int64       `parquet:"peers_at,optional,timestamp(millisecond)"`
	InfoHashV2Source string      `parquet:"info_hash_v2_source,optional,dict"`
}

// writeInts writes four valid rows with hash_type and attempts of types H
// and A, the third (row 3, rows[2]) holding typ and attempts; it returns
// the file's path.
func writeInts[H, A interface {
	~int32 | ~uint8 | ~uint16 | ~uint32
}](t *testing.T, typ H, attempts A) string {
	t.Helper()
	rows := make([]intsState[H, A], 4)
	for i := range rows {
		rows[i] = intsState[H, A]{InfoHash: schema.Hash{byte(i + 1)}, HashType: 1, FirstSeen: 1, LastSeen: 1,
			SeenCount: 1, LastSource: "x", MetadataStatus: "new", Attempts: 1, Tier: "hot"}
	}
	rows[2].HashType, rows[2].Attempts = typ, attempts
	path := filepath.Join(t.TempDir(), "state.parquet")
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNarrowIntsByValue: hash_type (an int8) and attempts (an int32) are
// read from a state file of any INT32 type by value, and a value past the
// field is refused as the file holds it, naming the column and the row,
// by every reader: a UINTEGER hash_type of 4294967295 (the bits of -1)
// was "hash_type -1, want 1 or 2", one of 4294967000 "value -296 out of
// range of INT(8)", and a UINTEGER attempts of 2^32-1 read as -1 by all
// but the untrusted reader.
func TestNarrowIntsByValue(t *testing.T) {
	tests := []struct {
		name string
		path func(t *testing.T) string
		want string // after "FILE: "; "" to be read, rows[2] with hash_type 2 and attempts read
		read int32
	}{
		{"INT32 hash_type 258", func(t *testing.T) string { return writeInts(t, int32(258), int32(1)) },
			`column "hash_type" row 3: 258 is outside int8`, 0},
		{"INT32 hash_type -300", func(t *testing.T) string { return writeInts(t, int32(-300), int32(1)) },
			`column "hash_type" row 3: -300 is outside int8`, 0},
		{"UINTEGER hash_type 4294967295", func(t *testing.T) string { return writeInts(t, uint32(4294967295), int32(1)) },
			`column "hash_type" row 3: 4294967295 is outside int8`, 0},
		{"UINTEGER hash_type 4294967000", func(t *testing.T) string { return writeInts(t, uint32(4294967000), int32(1)) },
			`column "hash_type" row 3: 4294967000 is outside int8`, 0},
		{"UTINYINT hash_type 200", func(t *testing.T) string { return writeInts(t, uint8(200), int32(1)) },
			`column "hash_type" row 3: 200 is outside int8`, 0},
		{"USMALLINT hash_type 2", func(t *testing.T) string { return writeInts(t, uint16(2), int32(1)) }, "", 1},
		{"UINTEGER attempts 2^32-1", func(t *testing.T) string { return writeInts(t, int32(2), uint32(1<<32-1)) },
			`column "attempts" row 3: 4294967295 is outside int32`, 0},
		{"UINTEGER attempts 2^31-1", func(t *testing.T) string { return writeInts(t, int32(2), uint32(1<<31-1)) }, "", 1<<31 - 1},
	}
	readers := []struct {
		name string
		read func(df rowio.DataFile) ([]schema.State, error)
	}{
		{"ReadStateFile", statecol.ReadStateFile},
		{"ReadUntrustedStateFile", statecol.ReadUntrustedStateFile},
		{"ReadState", func(df rowio.DataFile) ([]schema.State, error) {
			var out []schema.State
			err := statecol.ReadState(df, func(st []schema.State) error { out = append(out, st...); return nil })
			return out, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			for _, r := range readers {
				rows, err := r.read(rowio.UnrecordedFile(path))
				if tt.want == "" {
					if err != nil {
						t.Fatalf("%s: %v", r.name, err)
					}
					if len(rows) != 4 || rows[2].HashType != 2 || rows[2].Attempts != tt.read {
						t.Fatalf("%s: rows %+v", r.name, rows)
					}
					continue
				}
				want := path + ": " + tt.want
				if err == nil || err.Error() != want {
					t.Errorf("%s: %v\nwant %s", r.name, err, want)
				}
				if r.name == "ReadUntrustedStateFile" && exitcode.Of(err) != exitcode.Usage {
					t.Errorf("%s: exit %d, want bad input (%d)", r.name, exitcode.Of(err), exitcode.Usage)
				}
			}
		})
	}
}
