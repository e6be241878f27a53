package merge

import (
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestTooManyForSplice: the early check counts each hash with a result
// that counts once (its attempts, however many; not a hash with released
// rows only), unless a cold file holds it, against the bound of the hot
// files' rows (cold files none).
func TestTooManyForSplice(t *testing.T) {
	res := func(i int, outcome string) result {
		var r result
		r.InfoHash = hashAt(0x10, uint64(i))
		r.Outcome = outcome
		return r
	}
	hot := []dataset.FileInfo{{Name: "part-a.parquet", Rows: 256 * 64}, {Name: schedule.ColdFileName(), Rows: 1 << 30}}
	many := func(from, n int, outcome string) []result {
		var rs []result
		for i := from; i < from+n; i++ {
			rs = append(rs, res(i, outcome), res(i, outcome)) // two rows a hash
		}
		return rs
	}
	for _, c := range []struct {
		name    string
		files   []dataset.FileInfo
		results []result
		cold    []coldFile
		want    bool
	}{
		{"256 hashes, two rows each: at the bound", hot, many(0, 256, schema.OutcomeNoPeers), nil, false},
		{"257 hashes: past it", hot, many(0, 257, schema.OutcomeNoPeers), nil, true},
		{"released rows only do not count", hot, append(many(0, 200, schema.OutcomeNoPeers), many(200, 57, schema.OutcomeReleased)...), nil, false},
		{"a bigger bound from more hot rows", []dataset.FileInfo{{Name: "part-b.parquet", Rows: 300 * 64}}, many(0, 300, schema.OutcomeNoPeers), nil, false},
		{"cold files' rows are no part of the bound", []dataset.FileInfo{{Name: schedule.ColdFileName(), Rows: 1 << 30}}, many(0, 257, schema.OutcomeNoPeers), nil, true},
		{"a hash in a cold file does not count", hot, many(0, 257, schema.OutcomeNoPeers), coldOf(res(5, "")), false},
		{"nor in the second cold file", hot, many(0, 258, schema.OutcomeNoPeers), coldOf(res(5, "")).and(res(9, "")), false},
		{"a cold file's other hashes change nothing", hot, many(0, 257, schema.OutcomeNoPeers), coldOf(res(300, "")), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := tooManyForSplice(c.files, c.results, c.cold); got != c.want {
				t.Fatalf("tooManyForSplice = %v, want %v", got, c.want)
			}
		})
	}
}

// coldFiles are cold files' hashes for TestTooManyForSplice.
type coldFiles []coldFile

// coldOf is one cold file holding the hash of r.
func coldOf(r result) coldFiles {
	return coldFiles{{hashes: []schema.Hash{r.InfoHash}, sorted: []schema.Hash{r.InfoHash}}}
}

// and adds a cold file holding the hash of r.
func (c coldFiles) and(r result) coldFiles { return append(c, coldOf(r)...) }
