package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// failureOf and resultOf are results whose attempted_at (A), retry_after
// (R) and peer_failures' at (F) are an INT32, which a crafted footer types
// as a TIMESTAMP, or a plain INT64; H is the info_hash's type (fetch's
// FIXED_LEN_BYTE_ARRAY, or a BLOB: blobResult's reader).
type failureOf[F any] struct {
	Addr  string `parquet:"addr"`
	Class string `parquet:"class"`
	At    F      `parquet:"at"`
}

type resultOf[H, A, R, F any] struct {
	InfoHash     H              `parquet:"info_hash"`
	HashType     int8           `parquet:"hash_type,int(8)"`
	Attempt      int32          `parquet:"attempt"`
	AttemptedAt  A              `parquet:"attempted_at"`
	Outcome      string         `parquet:"outcome"`
	PeersFound   int32          `parquet:"peers_found"`
	PeersTried   int32          `parquet:"peers_tried"`
	PeerFailures []failureOf[F] `parquet:"peer_failures,list"`
	schema.ResultMeta
	RetryAfter R `parquet:"retry_after,optional"`
}

// resultFile writes one result of those types: a peers_penalised
// attempt at a, until r, after a peer failed at f.
func resultFile[H, A, R, F any](t *testing.T, h H, a A, r R, f F) string {
	t.Helper()
	return writeRows(t, "results.parquet", []resultOf[H, A, R, F]{{InfoHash: h, HashType: schema.HashV1,
		Attempt: 1, AttemptedAt: a, Outcome: schema.OutcomePeersPenalised, RetryAfter: r,
		PeerFailures: []failureOf[F]{{Addr: "127.0.0.1:1", Class: schema.OutcomeConnectFailed, At: f}}}})
}

// TestMergeTimestampStoredAsInt32: a results file whose attempted_at,
// retry_after or peer_failures' at is a TIMESTAMP (or TIMESTAMP_MILLIS)
// stored as an INT32 is a wrong schema saying so, exit 2, one line, as
// dedup says it of observed_at; merge read the column as INT64s and
// failed with "corrupt Parquet: ... cannot decode INT64 from input of
// size 4" (or read two values as one).
func TestMergeTimestampStoredAsInt32(t *testing.T) {
	h, at := hashAt(0x54, 1), int64(t0+minute)
	const ts = "TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS)"
	for _, tt := range []struct {
		name, file, column string
		converted          bool
	}{
		{"attempted_at", resultFile(t, h, int32(1000), at+hour, at), "attempted_at", false},
		{"attempted_at TIMESTAMP_MILLIS", resultFile(t, h, int32(1000), at+hour, at), "attempted_at", true},
		{"retry_after", resultFile(t, h, at, int32(1000), at), "retry_after", false},
		{"peer_failures at", resultFile(t, h, at, at+hour, int32(1000)), "at", false},
		{"attempted_at, BLOB info_hash", resultFile(t, h[:], int32(1000), at+hour, at), "attempted_at", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "results.parquet")
			if err := os.WriteFile(path, rowiotest.EditFooter(t, b, rowiotest.Int32Timestamp(t, tt.converted, tt.column)), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			_, err = tryMerge(dir, at+minute, path)
			col := tt.column
			if col == "at" {
				col = "peer_failures.list.element.at"
			}
			want := "merge: " + path + `: wrong schema: column "` + col + `" is ` + ts + ` stored as INT32, want a TIMESTAMP (INT64)`
			if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v (exit %d)\nwant %q (exit 2)", err, exitcode.Of(err), want)
			}
			if got := stateOf(t, dir)[h]; got.Attempts != 0 {
				t.Fatalf("committed: %+v", got)
			}
		})
	}
}
