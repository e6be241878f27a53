package plan

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// Planning reads the state column by column, page by page, into typed
// slices: several times faster than decoding rows into structs, and only
// the columns below are read at all.

// Status and tier codes.
const (
	codeOther uint8 = iota
	codeNew
	codeFailed
	codeFetched
	codeHot
	codeCold
)

var codes = map[string]uint8{
	schema.StatusNew: codeNew, schema.StatusFailed: codeFailed, schema.StatusFetched: codeFetched,
	schema.TierHot: codeHot, schema.TierCold: codeCold,
}

// rowGroup holds the planning columns of one row group.
type rowGroup struct {
	n           int
	hash        []byte // 20 bytes per row
	hashType    []int32
	firstSeen   []int64
	lastSeen    []int64
	activity    []float64
	status      []uint8
	attempts    []int32
	lastAttempt []int64
	nextRetry   []int64
	tier        []uint8
	reactivated []int64
	avoidAt     []int32 // row i's avoid_peers are avoid[avoidAt[i]:avoidAt[i+1]]
	avoid       []string
	peersAt     []int32 // row i's peers are peers[peersAt[i]:peersAt[i+1]]
	peers       []string
	hasV2       bool     // whether info_hash_v2 was read (else v2 is stale)
	v2          [][]byte // row i's full v2 hash, nil when not known
}

func (g *rowGroup) infoHash(i int) (h schema.Hash) {
	copy(h[:], g.hash[i*20:])
	return h
}

// infoHashV2 is row i's full 32-byte v2 hash, or nil when not known.
func (g *rowGroup) infoHashV2(i int) []byte {
	if !g.hasV2 {
		return nil
	}
	return g.v2[i]
}

// eachRowGroup calls fn with the planning columns of every row group of
// the state file df, once its footer matches the manifest's record (see
// statecol.Open). Its errors name the file once (statecol.Open's already
// do).
func eachRowGroup(df rowio.DataFile, g *rowGroup, fn func(*rowGroup)) error {
	f, err := statecol.Open(df)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := readRowGroups(f, g, fn); err != nil {
		return fmt.Errorf("%s: %w", df.Path(), err)
	}
	return nil
}

// readRowGroups is eachRowGroup on the open file f.
func readRowGroups(f *statecol.File, g *rowGroup, fn func(*rowGroup)) error {
	var first int64 // the file's row number of rg's first row
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		g.reset(n)
		c, _ := f.Column(rg, "info_hash")
		if c == nil {
			return errors.New("no info_hash column")
		}
		if err := statecol.Fixed(c, 20, g.hash); err != nil {
			return fmt.Errorf("info_hash: %w", err)
		}
		// A value that is none of the column's is damage: reading it as
		// something else (codeOther plans a hash as new) would hide it.
		var bad error
		refuse := func(i int, err error) {
			if bad == nil {
				bad = statecol.BadRow(first+int64(i), err)
			}
		}
		code := func(out []uint8, lo, hi uint8, check func(string) error) func(int, string) {
			return func(i int, s string) {
				c := codes[s]
				if c < lo || c > hi {
					refuse(i, check(s))
				}
				out[i] = c
			}
		}
		for _, r := range []struct {
			name string
			read func(parquet.ColumnChunk) error
		}{
			{"hash_type", func(c parquet.ColumnChunk) error {
				return statecol.Int32(c, n, func(i int, v int32) {
					if v != int32(schema.HashV1) && v != int32(schema.HashV2) {
						refuse(i, schema.CheckHashType(v))
					}
					g.hashType[i] = v
				})
			}},
			{"first_seen", func(c parquet.ColumnChunk) error {
				return statecol.Int64(c, n, func(i int, v int64) { g.firstSeen[i] = v })
			}},
			{"last_seen", func(c parquet.ColumnChunk) error {
				return statecol.Int64(c, n, func(i int, v int64) { g.lastSeen[i] = v })
			}},
			{"activity", func(c parquet.ColumnChunk) error {
				return statecol.Double(c, n, func(i int, v float64) { g.activity[i] = v })
			}},
			{"metadata_status", func(c parquet.ColumnChunk) error {
				return statecol.String(c, n, code(g.status, codeNew, codeFetched, schema.CheckStatus))
			}},
			{"attempts", func(c parquet.ColumnChunk) error {
				return statecol.Int32(c, n, func(i int, v int32) { g.attempts[i] = v })
			}},
			{"last_attempt", func(c parquet.ColumnChunk) error {
				return statecol.Int64(c, n, func(i int, v int64) { g.lastAttempt[i] = v })
			}},
			{"next_retry", func(c parquet.ColumnChunk) error {
				return statecol.Int64(c, n, func(i int, v int64) { g.nextRetry[i] = v })
			}},
			{"tier", func(c parquet.ColumnChunk) error {
				return statecol.String(c, n, code(g.tier, codeHot, codeCold, schema.CheckTier))
			}},
			{"reactivated_at", func(c parquet.ColumnChunk) error {
				return statecol.Int64(c, n, func(i int, v int64) { g.reactivated[i] = v })
			}},
		} {
			c, _ := f.Column(rg, r.name)
			if c == nil {
				continue // an older file: the column reads as zero
			}
			if err := r.read(c); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
		}
		if bad != nil {
			return bad
		}
		if err := readList(f, rg, "avoid_peers", n, g.avoidAt, &g.avoid); err != nil {
			return err
		}
		if err := readList(f, rg, "peers", n, g.peersAt, &g.peers); err != nil {
			return err
		}
		if err := g.readV2(f, rg, first); err != nil {
			return fmt.Errorf("info_hash_v2: %w", err)
		}
		fn(g)
		first += int64(n)
	}
	return nil
}

// readList reads the list<string> column name of row group rg (n rows)
// into vals, row i's elements at vals[at[i]:at[i+1]], unless the file
// lacks it or its statistics say every list is empty (most row groups'
// peers): then at stays all 0.
func readList(f *statecol.File, rg parquet.RowGroup, name string, n int, at []int32, vals *[]string) error {
	c, maxDef := f.Column(rg, name, "list", "element")
	if c == nil || statecol.AllNull(c, int64(n)) {
		return nil
	}
	last := -1
	err := statecol.StringLists(c, n, maxDef, func(i int, s string) {
		for r := last + 1; r <= i; r++ {
			at[r] = int32(len(*vals))
		}
		last = i
		*vals = append(*vals, s)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for r := last + 1; r <= n; r++ {
		at[r] = int32(len(*vals))
	}
	return nil
}

// readV2 reads the info_hash_v2 column of row group rg (whose first row
// is the file's row first), if the file has one and its statistics do not
// say it is all null: v2 hashes are rare, and most row groups skip the
// column without decoding a page.
func (g *rowGroup) readV2(f *statecol.File, rg parquet.RowGroup, first int64) error {
	c, _ := f.Column(rg, "info_hash_v2")
	if c == nil || statecol.AllNull(c, int64(g.n)) {
		return nil
	}
	g.hasV2, g.v2 = true, zero(grow(g.v2, g.n))
	var bad error
	err := statecol.Bytes(c, g.n, func(i int, b []byte) {
		if len(b) == 0 {
			return
		}
		switch {
		case bad != nil:
		case len(b) != 32:
			bad = fmt.Errorf("row %d: %d bytes, want 32", first+int64(i)+1, len(b))
		case !bytes.Equal(b[:20], g.hash[i*20:i*20+20]):
			bad = fmt.Errorf("row %d: %x is not a v2 hash of info_hash %x", first+int64(i)+1, b, g.hash[i*20:i*20+20])
		}
		g.v2[i] = b
	})
	if err == nil {
		err = bad
	}
	return err
}

func (g *rowGroup) reset(n int) {
	g.n = n
	g.hash = grow(g.hash, 20*n)
	g.hashType = zero(grow(g.hashType, n))
	g.firstSeen = zero(grow(g.firstSeen, n))
	g.lastSeen = zero(grow(g.lastSeen, n))
	g.activity = zero(grow(g.activity, n))
	g.status = zero(grow(g.status, n))
	g.attempts = zero(grow(g.attempts, n))
	g.lastAttempt = zero(grow(g.lastAttempt, n))
	g.nextRetry = zero(grow(g.nextRetry, n))
	g.tier = zero(grow(g.tier, n))
	g.reactivated = zero(grow(g.reactivated, n))
	g.avoidAt = zero(grow(g.avoidAt, n+1))
	g.avoid = g.avoid[:0]
	g.peersAt = zero(grow(g.peersAt, n+1))
	g.peers = g.peers[:0]
	g.hasV2 = false // readV2 fills v2 only for row groups with a v2 hash
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func zero[T any](s []T) []T {
	clear(s)
	return s
}
