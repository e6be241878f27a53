package plan

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/infohash/infohash/formats/schema"
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
}

func (g *rowGroup) infoHash(i int) (h schema.Hash) {
	copy(h[:], g.hash[i*20:])
	return h
}

// eachRowGroup calls fn with the planning columns of every row group of
// the Parquet file at path.
func eachRowGroup(path string, g *rowGroup, fn func(*rowGroup)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, info.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return err
	}
	sch := pf.Schema()
	col := func(path ...string) (int, bool) {
		l, ok := sch.Lookup(path...)
		return l.ColumnIndex, ok
	}
	hashCol, ok := col("info_hash")
	if !ok {
		return errors.New("no info_hash column")
	}
	for _, rg := range pf.RowGroups() {
		n := int(rg.NumRows())
		g.reset(n)
		cc := rg.ColumnChunks()
		if err := readFixed(cc[hashCol], 20, g.hash); err != nil {
			return fmt.Errorf("info_hash: %w", err)
		}
		for _, c := range []struct {
			name string
			read func(parquet.ColumnChunk) error
		}{
			{"hash_type", func(c parquet.ColumnChunk) error { return readInt32(c, g.hashType) }},
			{"first_seen", func(c parquet.ColumnChunk) error { return readInt64(c, g.firstSeen) }},
			{"last_seen", func(c parquet.ColumnChunk) error { return readInt64(c, g.lastSeen) }},
			{"activity", func(c parquet.ColumnChunk) error { return readDouble(c, g.activity) }},
			{"metadata_status", func(c parquet.ColumnChunk) error { return readCode(c, g.status) }},
			{"attempts", func(c parquet.ColumnChunk) error { return readInt32(c, g.attempts) }},
			{"last_attempt", func(c parquet.ColumnChunk) error { return readInt64(c, g.lastAttempt) }},
			{"next_retry", func(c parquet.ColumnChunk) error { return readInt64(c, g.nextRetry) }},
			{"tier", func(c parquet.ColumnChunk) error { return readCode(c, g.tier) }},
			{"reactivated_at", func(c parquet.ColumnChunk) error { return readInt64(c, g.reactivated) }},
		} {
			i, ok := col(c.name)
			if !ok {
				continue // an older file: the column reads as zero
			}
			if err := c.read(cc[i]); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		if l, ok := sch.Lookup("avoid_peers", "list", "element"); ok {
			if err := readStringLists(cc[l.ColumnIndex], l.MaxDefinitionLevel, g); err != nil {
				return fmt.Errorf("avoid_peers: %w", err)
			}
		}
		fn(g)
	}
	return nil
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

// data returns the page's values (the non-null ones).
func data(p parquet.Page) *encoding.Values {
	v := p.Data()
	return &v
}

// eachPage calls fn for every page of a column chunk, releasing it after.
func eachPage(c parquet.ColumnChunk, fn func(parquet.Page) error) error {
	pages := c.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = fn(p)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
}

// spread places the non-null values of a page at their rows: defs holds a
// definition level per row (none for a required column).
func spread[T any](out []T, row int, vals []T, defs []byte) (int, error) {
	if len(defs) == 0 {
		if row+len(vals) > len(out) {
			return row, errors.New("more values than rows")
		}
		copy(out[row:], vals)
		return row + len(vals), nil
	}
	if row+len(defs) > len(out) {
		return row, errors.New("more values than rows")
	}
	j := 0
	for _, d := range defs {
		if d > 0 {
			if j >= len(vals) {
				return row, errors.New("fewer values than definition levels")
			}
			out[row] = vals[j]
			j++
		}
		row++
	}
	return row, nil
}

func readInt64(c parquet.ColumnChunk, out []int64) error {
	row := 0
	err := eachPage(c, func(p parquet.Page) (err error) {
		row, err = spread(out, row, data(p).Int64(), p.DefinitionLevels())
		return err
	})
	return complete(err, row, len(out))
}

func readInt32(c parquet.ColumnChunk, out []int32) error {
	row := 0
	err := eachPage(c, func(p parquet.Page) (err error) {
		row, err = spread(out, row, data(p).Int32(), p.DefinitionLevels())
		return err
	})
	return complete(err, row, len(out))
}

func readDouble(c parquet.ColumnChunk, out []float64) error {
	row := 0
	err := eachPage(c, func(p parquet.Page) (err error) {
		row, err = spread(out, row, data(p).Double(), p.DefinitionLevels())
		return err
	})
	return complete(err, row, len(out))
}

func readFixed(c parquet.ColumnChunk, size int, out []byte) error {
	at := 0
	err := eachPage(c, func(p parquet.Page) error {
		if len(p.DefinitionLevels()) > 0 {
			return errors.New("optional info_hash")
		}
		buf, sz := data(p).FixedLenByteArray()
		if sz != size {
			return fmt.Errorf("%d-byte values, want %d", sz, size)
		}
		if at+len(buf) > len(out) {
			return errors.New("more values than rows")
		}
		at += copy(out[at:], buf)
		return nil
	})
	return complete(err, at/size, len(out)/size)
}

// readCode maps a (usually dictionary-encoded) string column to codes.
func readCode(c parquet.ColumnChunk, out []uint8) error {
	row := 0
	err := eachPage(c, func(p parquet.Page) error {
		if len(p.DefinitionLevels()) > 0 {
			return errors.New("optional column")
		}
		if d := p.Dictionary(); d != nil {
			dict := make([]uint8, d.Len())
			for i := range dict {
				dict[i] = codes[string(d.Index(int32(i)).ByteArray())]
			}
			for _, ix := range data(p).Int32() {
				if row >= len(out) || int(ix) >= len(dict) || ix < 0 {
					return errors.New("bad dictionary index")
				}
				out[row] = dict[ix]
				row++
			}
			return nil
		}
		buf, offs := data(p).ByteArray()
		for i := 0; i+1 < len(offs); i++ {
			if row >= len(out) {
				return errors.New("more values than rows")
			}
			out[row] = codes[string(buf[offs[i]:offs[i+1]])]
			row++
		}
		return nil
	})
	return complete(err, row, len(out))
}

// complete checks that a column filled every row of its row group.
func complete(err error, got, want int) error {
	if err == nil && got != want {
		err = fmt.Errorf("%d values for %d rows", got, want)
	}
	return err
}

// readStringLists reads a list<string> column into g.avoidAt/g.avoid.
func readStringLists(c parquet.ColumnChunk, maxDef int, g *rowGroup) error {
	row := -1
	err := eachPage(c, func(p parquet.Page) error {
		reps, defs := p.RepetitionLevels(), p.DefinitionLevels()
		buf, offs := data(p).ByteArray()
		v := 0
		for i := range defs {
			if len(reps) == 0 || reps[i] == 0 {
				row++
				if row >= g.n {
					return errors.New("more lists than rows")
				}
				g.avoidAt[row] = int32(len(g.avoid))
			}
			if int(defs[i]) == maxDef { // an element; lower levels mark an empty list
				if v+1 >= len(offs) {
					return errors.New("fewer values than levels")
				}
				g.avoid = append(g.avoid, string(buf[offs[v]:offs[v+1]]))
				v++
			}
		}
		return nil
	})
	for r := row + 1; r <= g.n; r++ {
		g.avoidAt[r] = int32(len(g.avoid))
	}
	return complete(err, row+1, g.n)
}
