// Bulk readers: a column chunk's values straight into the caller's slice,
// a page at a time in plain loops, for scans that test a few columns of
// every row (merge's archive scan). The callback readers (Int64, String)
// cost a closure call or two a value, which was most of such a scan's
// time once the pages were decompressed.

package statecol

import "github.com/parquet-go/parquet-go"

// Int64s reads an INT64 column chunk of len(dst) rows into dst (a null
// is 0).
func Int64s(c parquet.ColumnChunk, dst []int64) error {
	return words(c, dst, func(p parquet.Page) []int64 { return values(p).Int64() })
}

// Int32s reads an INT32 column chunk of len(dst) rows into dst (a null
// is 0).
func Int32s(c parquet.ColumnChunk, dst []int32) error {
	return words(c, dst, func(p parquet.Page) []int32 { return values(p).Int32() })
}

// words reads a numeric column into dst, of(p) giving a page's non-null
// values; a dictionary-encoded page's indexes are looked up in its
// dictionary (another writer may encode integers so).
func words[T int32 | int64](c parquet.ColumnChunk, dst []T, of func(parquet.Page) []T) error {
	row, n := 0, len(dst)
	var buf []T
	err := EachPage(c, func(p parquet.Page) error {
		var vs []T
		if d := p.Dictionary(); d != nil {
			dict, ix := of(d.Page()), values(p).Int32()
			buf = resizeTo(buf, len(ix))
			for k, x := range ix {
				if x < 0 || int(x) >= len(dict) {
					return errDictIndex
				}
				buf[k] = dict[x]
			}
			vs = buf
		} else {
			vs = of(p)
		}
		defs, err := levels(p, row, n, len(vs))
		if err != nil {
			return err
		}
		out := dst[row : row+pageRows(defs, len(vs))]
		if len(defs) == 0 || len(vs) == len(defs) {
			copy(out, vs) // no null: row k is value k
		} else {
			k := 0
			for j, d := range defs {
				var v T
				if d != 0 {
					if k >= len(vs) {
						return errFewerValues
					}
					v = vs[k]
					k++
				}
				out[j] = v
			}
		}
		row += len(out)
		return nil
	})
	return complete(err, row, n)
}

// Codes reads a string column chunk of len(dst) rows into dst as small
// codes: code(s) of each row's string s ("" for a null). code is called
// once per dictionary entry of a dictionary-encoded chunk (once per
// value of a PLAIN page, but for runs of one value), and must not keep s.
func Codes(c parquet.ColumnChunk, dst []uint8, code func(s string) uint8) error {
	row, n := 0, len(dst)
	null := code("")
	var dict parquet.Dictionary
	var table []uint8 // the code of each entry of dict
	err := EachPage(c, func(p parquet.Page) error {
		if d := p.Dictionary(); d != nil {
			if d != dict {
				dict, table = d, table[:0]
				for i := range d.Len() {
					table = append(table, code(string(d.Index(int32(i)).ByteArray())))
				}
			}
			ix := values(p).Int32()
			defs, err := levels(p, row, n, len(ix))
			if err != nil {
				return err
			}
			out := dst[row : row+pageRows(defs, len(ix))]
			if len(ix) == len(out) { // no null: row j is index j
				for j, x := range ix {
					if uint32(x) >= uint32(len(table)) {
						return errDictIndex
					}
					out[j] = table[x]
				}
				row += len(out)
				return nil
			}
			k := 0
			for j := range out {
				if len(defs) > 0 && defs[j] == 0 {
					out[j] = null
					continue
				}
				if k >= len(ix) {
					return errFewerValues
				}
				x := ix[k]
				k++
				if x < 0 || int(x) >= len(table) {
					return errDictIndex
				}
				out[j] = table[x]
			}
			row += len(out)
			return nil
		}
		buf, offs := values(p).ByteArray()
		nvals := max(len(offs)-1, 0)
		defs, err := levels(p, row, n, nvals)
		if err != nil {
			return err
		}
		out := dst[row : row+pageRows(defs, nvals)]
		k, last, lastCode := 0, "", null
		for j := range out {
			if len(defs) > 0 && defs[j] == 0 {
				out[j] = null
				continue
			}
			if k >= nvals {
				return errFewerValues
			}
			b := buf[offs[k]:offs[k+1]]
			k++
			if string(b) != last {
				last = string(b)
				lastCode = code(last)
			}
			out[j] = lastCode
		}
		row += len(out)
		return nil
	})
	return complete(err, row, n)
}

// Int64Bounds returns the least and the greatest value of a required
// INT64 or INT32 column chunk c of a row group of rows rows, from its
// statistics alone (nothing is decoded). ok is false when they are not
// recorded, for an optional column (its nulls read as 0, which the
// statistics do not bound, and a writer may leave the null count out)
// and for a chunk of another type, and when a bound is not of the
// column's size (a damaged footer: parquet-go panics on it). Bounds a
// writer recorded loosely still hold every value: Parquet allows no
// others.
func Int64Bounds(c parquet.ColumnChunk, rows int64) (lo, hi int64, ok bool) {
	defer func() {
		if recover() != nil {
			lo, hi, ok = 0, 0, false // the caller reads the values instead
		}
	}()
	fc, isFile := unkept(c).(*parquet.FileColumnChunk)
	if !isFile || rows <= 0 || !fc.Node().Required() || fc.NumValues() != rows {
		return 0, 0, false
	}
	minV, maxV, ok := fc.Bounds()
	if !ok || minV.IsNull() || maxV.IsNull() {
		return 0, 0, false
	}
	switch fc.Type().Kind() {
	case parquet.Int64:
		return minV.Int64(), maxV.Int64(), true
	case parquet.Int32:
		return int64(minV.Int32()), int64(maxV.Int32()), true
	}
	return 0, 0, false
}

// resizeTo returns s with n elements, reusing its array when it can.
func resizeTo[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
