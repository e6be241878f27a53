package statecol

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// BenchmarkSplice splices one partition's state file the way an
// incremental stage does. The file is INFOHASH_SPLICE_FILE when set (a
// partition file of a real dataset), else 78k generated rows.
//
//   - dedup: 1M observations into a 20M-hash state: ~890 known hashes of
//     ~78k rows change last_seen, seen_count, activity and last_source.
//   - merge: ~40 fetch results of ~78k rows change the retry columns
//     (attempts, last_attempt, next_retry, last_failure, metadata_status,
//     lease_id, lease_until, backoff_step, tier), rows going from null to
//     a value and back, and append the fetch's peer to avoid_peers.
func BenchmarkSplice(b *testing.B) {
	var src *File
	if path := os.Getenv("INFOHASH_SPLICE_FILE"); path != "" {
		var err error
		if src, err = Open(rowio.UnrecordedFile(path)); err != nil {
			b.Fatal(err)
		}
	} else {
		rows := randomStates(78_000, 5, false)
		slices.SortFunc(rows, func(x, y schema.State) int { return slices.Compare(x.InfoHash[:], y.InfoHash[:]) })
		src, _ = openStateFile(b, rows)
	}
	defer src.Close()
	n := src.NumRows()
	need := ColumnsNamed("info_hash_v2", "hash_type", "first_seen", "last_seen", "seen_count",
		"last_source", "activity", "metadata_status", "last_attempt", "last_failure", "next_retry", "tier",
		"backoff_step", "reactivated_at")
	for _, tc := range []struct {
		name    string
		changes int64 // rows changed, about
		bytes   int64 // bytes a row counted by SetBytes
		change  func(i int, st *schema.State)
		mask    Columns
		need    Columns // read besides need
	}{
		{"dedup", 890, 31, func(_ int, st *schema.State) {
			st.LastSeen += 1000
			st.SeenCount++
			st.Activity = st.Activity*0.5 + 1
			st.LastSource = "dht_get_peers"
		}, ColumnsNamed("last_seen", "seen_count", "activity", "last_source"), 0},
		{"merge", 40, 0, func(i int, st *schema.State) {
			st.AvoidPeers = append(st.AvoidPeers, fmt.Sprintf("127.0.%d.%d:6881", i>>8&255, i&255))
			if i%2 == 0 { // a failed fetch: the lease ends, a retry is planned
				st.Attempts++
				st.LastAttempt = st.LastSeen + 1000
				st.NextRetry = st.LastAttempt + 60_000<<st.BackoffStep
				st.LastFailure = "no_peers"
				st.MetadataStatus = schema.StatusFailed
				st.LeaseID, st.LeaseUntil = "", 0
				st.BackoffStep++
				return
			}
			// a fetched one: no retry, no failure, leased until merged
			st.Attempts++
			st.LastAttempt = st.LastSeen + 1000
			st.NextRetry, st.LastFailure = 0, ""
			st.MetadataStatus = schema.StatusFetched
			st.LeaseID, st.LeaseUntil = "L0123456789abcdef", st.LastAttempt+3_600_000
			st.Tier = schema.TierCold
		}, ColumnsNamed("attempts", "last_attempt", "next_retry", "last_failure", "metadata_status",
			"lease_id", "lease_until", "backoff_step", "tier", "avoid_peers"),
			ColumnsNamed("attempts", "lease_id", "lease_until", "avoid_peers")},
	} {
		r := rand.New(rand.NewPCG(1, 2))
		var rows []int64
		for k := int64(0); k < n; k++ {
			if r.Int64N(n) < tc.changes {
				rows = append(rows, k)
			}
		}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(n * tc.bytes)
			var sink discardSink
			for b.Loop() {
				var sel []int32
				err := Splice(&sink, src, need|tc.need, func(first, rgn int64) []int32 {
					sel = sel[:0]
					for _, k := range rows {
						if k >= first && k < first+rgn {
							sel = append(sel, int32(k-first))
						}
					}
					return sel
				}, func(first int64, sel []int32, st []schema.State) (Columns, error) {
					for i := range st {
						tc.change(int(first)+int(sel[i]), &st[i])
					}
					return tc.mask, nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// discardSink drops what it is given, as io.Discard, but reads what it is
// handed through ReadFrom into a buffer of fsutil.Uncached's size, as
// Uncached does: io.Discard's ReadFrom reads 8 KB at a time, a read call
// each, which no staged file does.
type discardSink struct{ buf []byte }

func (d *discardSink) Write(b []byte) (int, error) { return len(b), nil }

func (d *discardSink) ReadFrom(r io.Reader) (int64, error) {
	if d.buf == nil {
		d.buf = make([]byte, 1<<20)
	}
	var n int64
	for {
		m, err := r.Read(d.buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
