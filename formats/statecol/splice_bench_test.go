package statecol

import (
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// BenchmarkSplice splices one partition's state file the way an
// incremental dedup does (1M observations into a 20M-hash state: ~890
// known hashes of ~78k rows change last_seen, seen_count, activity and
// last_source). The file is INFOHASH_SPLICE_FILE when set (a partition
// file of a real dataset), else 78k generated rows.
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
	r := rand.New(rand.NewPCG(1, 2))
	var rows []int64
	for k := int64(0); k < n; k++ {
		if r.Int64N(n) < 890 {
			rows = append(rows, k)
		}
	}
	need := ColumnsNamed("info_hash_v2", "hash_type", "first_seen", "last_seen", "seen_count",
		"last_source", "activity", "metadata_status", "last_attempt", "last_failure", "next_retry", "tier",
		"backoff_step", "reactivated_at")
	b.SetBytes(n * 31)
	for b.Loop() {
		var sel []int32
		err := Splice(io.Discard, src, need, func(first, rgn int64) []int32 {
			sel = sel[:0]
			for _, k := range rows {
				if k >= first && k < first+rgn {
					sel = append(sel, int32(k-first))
				}
			}
			return sel
		}, func(first int64, sel []int32, st []schema.State) (Columns, error) {
			for i := range st {
				st[i].LastSeen += 1000
				st[i].SeenCount++
				st[i].Activity = st[i].Activity*0.5 + 1
				st[i].LastSource = "dht_get_peers"
			}
			return ColumnsNamed("last_seen", "seen_count", "activity", "last_source"), nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
