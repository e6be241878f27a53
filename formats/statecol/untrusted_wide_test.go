package statecol

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// wideState is schema.State as another tool may write it: attempts a
// UINTEGER, seen_count a UBIGINT.
type wideState struct {
	InfoHash         schema.Hash `parquet:"info_hash"`
	InfoHashV2       []byte      `parquet:"info_hash_v2,optional"`
	HashType         int8        `parquet:"hash_type,int(8)"`
	FirstSeen        int64       `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen         int64       `parquet:"last_seen,timestamp(millisecond)"`
	SeenCount        uint64      `parquet:"seen_count"`
	LastSource       string      `parquet:"last_source,dict"`
	Activity         float64     `parquet:"activity"`
	MetadataStatus   string      `parquet:"metadata_status,dict"`
	Attempts         uint32      `parquet:"attempts"`
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

// TestUntrustedWideInts: a state file from elsewhere (merge --from) is
// read by value whatever its integer types: an attempts past int32 or a
// seen_count past int64 is bad input naming the file, the column and the
// row, not the -1 or negative count of its bits; values that fit are read.
func TestUntrustedWideInts(t *testing.T) {
	row := func(i int, attempts uint32, seen uint64) wideState {
		return wideState{InfoHash: schema.Hash{byte(i)}, HashType: 1, FirstSeen: 1, LastSeen: 1, SeenCount: seen,
			LastSource: "x", MetadataStatus: "new", Attempts: attempts, Tier: "hot"}
	}
	tests := []struct {
		name string
		rows []wideState
		want string // after "FILE: ", "" to be read
	}{
		{"values that fit", []wideState{row(1, 1, 1), row(2, math.MaxInt32, math.MaxInt64)}, ""},
		{"attempts 2^32-1", []wideState{row(1, 1, 1), row(2, math.MaxUint32, 1)},
			`column "attempts" row 2: 4294967295 is outside int32`},
		{"seen_count 2^63", []wideState{row(1, 1, 1), row(2, 1, 1<<63)},
			`column "seen_count" row 2: 9223372036854775808 is more than an int64 holds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "state.parquet")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			w := parquet.NewGenericWriter[wideState](f)
			if _, err := w.Write(tt.rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			rows, err := ReadUntrustedStateFileWithin(rowio.UnrecordedFile(p), rowio.DefaultLimits())
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if last := rows[len(rows)-1]; last.Attempts != math.MaxInt32 || last.SeenCount != math.MaxInt64 {
					t.Fatalf("attempts %d, seen_count %d", last.Attempts, last.SeenCount)
				}
				return
			}
			want := p + ": " + tt.want
			if err == nil || !strings.HasSuffix(err.Error(), want) || exitcode.Of(err) != exitcode.Usage || rows != nil {
				t.Fatalf("err = %v (exit %d, %d rows)\nwant bad input ending %q", err, exitcode.Of(err), len(rows), want)
			}
		})
	}
}
