// Transcoding: a changed column of a spliced row group laid out again from
// its old pages, with the changed rows' new values put in.

package statecol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// fieldKind is how a column's values are read from its pages and laid out
// (the colBuf method fill uses for it).
type fieldKind uint8

const (
	kindInt64    fieldKind = iota // required INT64: int64v
	kindOptInt64                  // optional INT64 timestamp, null is 0: optInt64
	kindDouble                    // required DOUBLE
	kindInt32                     // required INT32: int32v
	kindInt8                      // required INT32 held in an int8 field
	kindStr                       // required string: str
	kindOptStr                    // optional string, null is "": optStr
)

// transcodable are the columns a splice lays out from their old pages by
// transcode; the lists (avoid_peers, peers) have transcodeList, and
// info_hash and info_hash_v2 go through State rows.
var transcodable = func() (m [numStateColumns]struct {
	ok   bool
	kind fieldKind
	off  uintptr
}) {
	var z schema.State
	set := func(col int, kind fieldKind, off uintptr) {
		m[col].ok, m[col].kind, m[col].off = true, kind, off
	}
	set(cHashType, kindInt8, unsafe.Offsetof(z.HashType))
	set(cFirstSeen, kindInt64, unsafe.Offsetof(z.FirstSeen))
	set(cLastSeen, kindInt64, unsafe.Offsetof(z.LastSeen))
	set(cSeenCount, kindInt64, unsafe.Offsetof(z.SeenCount))
	set(cLastSource, kindStr, unsafe.Offsetof(z.LastSource))
	set(cActivity, kindDouble, unsafe.Offsetof(z.Activity))
	set(cMetadataStatus, kindStr, unsafe.Offsetof(z.MetadataStatus))
	set(cAttempts, kindInt32, unsafe.Offsetof(z.Attempts))
	set(cLastAttempt, kindOptInt64, unsafe.Offsetof(z.LastAttempt))
	set(cLastFailure, kindOptStr, unsafe.Offsetof(z.LastFailure))
	set(cNextRetry, kindOptInt64, unsafe.Offsetof(z.NextRetry))
	set(cLeaseID, kindOptStr, unsafe.Offsetof(z.LeaseID))
	set(cLeaseUntil, kindOptInt64, unsafe.Offsetof(z.LeaseUntil))
	set(cTier, kindStr, unsafe.Offsetof(z.Tier))
	set(cBackoffStep, kindInt32, unsafe.Offsetof(z.BackoffStep))
	set(cBadMetadata, kindInt32, unsafe.Offsetof(z.BadMetadata))
	set(cReactivated, kindOptInt64, unsafe.Offsetof(z.Reactivated))
	set(cFirstSource, kindOptStr, unsafe.Offsetof(z.FirstSource))
	set(cLastFailureAt, kindOptInt64, unsafe.Offsetof(z.LastFailureAt))
	set(cPeersAt, kindOptInt64, unsafe.Offsetof(z.PeersAt))
	set(cInfoHashV2Source, kindOptStr, unsafe.Offsetof(z.InfoHashV2Source))
	return m
}()

// transcodableMask is the set of transcodable columns.
var transcodableMask = func() Columns {
	var m Columns
	for k, t := range transcodable {
		if t.ok {
			m |= 1 << k
		}
	}
	return m
}()

// littleEndian: the host's words are laid out as PLAIN values are, so a
// run of them can be appended as bytes.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// errSlowPage is what transcode's fast paths return for a page they do
// not take: the general path lays it out.
var errSlowPage = errors.New("statecol: page for the general path")

// transcode lays out column k of row group rg (n rows) in sw.cols[k],
// already reset by fillBegin: every row's old value, except rows sel[i]
// (sorted), which take st[i]'s field. The result is what fill would lay
// out from the whole row group's rows with the changes made, without
// decoding any row into a State (250 bytes a row, where a column's value
// is 8).
func (sw *stateWriter) transcode(f *File, rg parquet.RowGroup, k, n int, sel []int32, st []schema.State) error {
	t := transcodable[k]
	if !t.ok {
		return fmt.Errorf("statecol: column %d cannot be transcoded", k)
	}
	c := &sw.cols[k]
	name := stateColumnNames[k]
	cc, _ := f.Column(rg, name)
	if cc == nil {
		return fmt.Errorf("statecol: no column %s", name)
	}
	next := 0 // sel's next entry
	// emit appends row r's value: the changed row's, or the old one (zero
	// for a null) given as a word, a string, or both as the kind needs.
	emit := func(r int, w int64, s string) {
		if next < len(sel) && int(sel[next]) == r {
			p := fieldAt(st, next, t.off)
			next++
			switch t.kind {
			case kindInt64, kindOptInt64:
				w = *(*int64)(p)
			case kindDouble:
				w = int64(math.Float64bits(*(*float64)(p)))
			case kindInt32:
				w = int64(*(*int32)(p))
			case kindInt8:
				w = int64(*(*int8)(p))
			case kindStr, kindOptStr:
				s = *(*string)(p)
			}
		}
		switch t.kind {
		case kindInt64:
			c.int64v(w)
		case kindOptInt64:
			c.optInt64(w)
		case kindDouble:
			c.vals = binary.LittleEndian.AppendUint64(c.vals, uint64(w))
		case kindInt32, kindInt8:
			c.int32v(int32(w))
		case kindStr:
			c.str(s)
		case kindOptStr:
			c.optStr(s)
		}
	}
	row := 0
	var cd chunkDict
	var dictStrings []string
	var remap []int32   // dictionary index -> id in c's dictionary, -1 unknown
	var wordBuf []int64 // an INT32 page's values widened, for the general path
	// eachRun walks a page's rows [0, rows) (file rows row+j): run(j, end)
	// for each stretch of rows that keep their old values, changed(j) for
	// each selected row, which must call emit.
	eachRun := func(rows int, run func(j, end int) error, changed func(j int) error) error {
		for j := 0; j < rows; {
			end := rows
			if next < len(sel) && int(sel[next])-row < end {
				end = int(sel[next]) - row
			}
			if end > j {
				if err := run(j, end); err != nil {
					return err
				}
				j = end
			}
			if j < rows {
				if err := changed(j); err != nil {
					return err
				}
				j++
			}
		}
		return nil
	}
	if ws, ok := keptInt64s(cc); ok && t.kind == kindInt64 && littleEndian && len(ws) == n {
		// The values readDeltaInt64 decoded: as a page of n rows, the
		// usual case below.
		err := eachRun(n, func(j, end int) error { c.int64s(ws[j:end], true); return nil },
			func(j int) error { emit(j, 0, ""); return nil })
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		c.hasStats = c.lo <= c.hi && k != cActivity
		return nil
	}
	err := EachPage(cc, func(p parquet.Page) error {
		var words []int64
		var ints []int32            // an INT32 page's values
		var strs func(v int) string // a plain page's strings
		var dictIdx []int32         // a dictionary page's indexes
		nvals := 0
		switch t.kind {
		case kindInt64, kindOptInt64:
			words = values(p).Int64()
			nvals = len(words)
		case kindDouble:
			fs := values(p).Double()
			words = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(fs))), len(fs))
			nvals = len(fs)
		case kindInt32, kindInt8:
			ints = values(p).Int32()
			nvals = len(ints)
		default:
			if d := p.Dictionary(); d != nil {
				var fresh bool
				if dictStrings, fresh = cd.of(d); fresh {
					remap = make([]int32, len(dictStrings))
					for i := range remap {
						remap[i] = -1
					}
				}
				ix := values(p).Int32()
				for _, x := range ix {
					if x < 0 || int(x) >= len(dictStrings) {
						return errDictIndex
					}
				}
				nvals, dictIdx = len(ix), ix
			} else {
				buf, offs := values(p).ByteArray()
				strs, nvals = func(v int) string { return string(buf[offs[v]:offs[v+1]]) }, max(len(offs)-1, 0)
			}
		}
		defs, err := levels(p, row, n, nvals)
		if err != nil {
			return err
		}
		rows := pageRows(defs, nvals)
		changed := func(j int) error { emit(row+j, 0, ""); return nil }
		v := 0 // an optional column's values before row j (the paths with levels)
		// changedOpt is changed for a page with levels: a changed row
		// that had a value moves v past it.
		changedOpt := func(j int) error {
			if defs[j] != 0 {
				if v >= nvals {
					return errFewerValues
				}
				v++
			}
			return changed(j)
		}
		switch {
		case len(defs) == 0 && (t.kind == kindInt64 || t.kind == kindDouble) && littleEndian:
			// The usual case: runs of old values copied as they are, the
			// changed rows between them.
			err = eachRun(rows, func(j, end int) error {
				// Exact bounds, from every value: readers may answer
				// min() and max() from them (arrow-rs and DataFusion
				// take INT64 statistics without exactness flags as
				// exact), so bounds kept from the old chunk, looser
				// once its extreme row changed, would be wrong answers.
				c.int64s(words[j:end], t.kind == kindInt64)
				return nil
			}, changed)
		case len(defs) == 0 && (t.kind == kindInt32 || t.kind == kindInt8) && p.Dictionary() == nil && littleEndian:
			// A required INT32 page: runs copied, as above.
			err = eachRun(rows, func(j, end int) error { c.int32s(ints[j:end]); return nil }, changed)
		case t.kind == kindOptInt64 && len(defs) > 0 && littleEndian:
			// An optional INT64 page: the runs' levels and values copied
			// as they are, unless a run holds what optInt64 would lay out
			// otherwise (a level above 1, a non-null 0).
			err = eachRun(rows, func(j, end int) error {
				k := v + countDefined(defs[j:end])
				if k > nvals {
					return errFewerValues
				}
				if !c.optInt64s(defs[j:end], words[v:k]) {
					for _, d := range defs[j:end] {
						if d != 0 {
							c.optInt64(words[v])
							v++
						} else {
							c.optInt64(0)
						}
					}
				}
				v = k
				return nil
			}, changedOpt)
		case t.kind == kindStr && dictIdx != nil && len(defs) == 0:
			// The usual string page (required, dictionary-encoded): the
			// runs of old rows between changed ones are a lookup each.
			err = eachRun(rows, func(j, end int) error {
				for ; j < end; j++ {
					x := dictIdx[j]
					if id := remap[x]; id >= 0 && !c.plain {
						c.idx = append(c.idx, id)
						continue
					}
					emit(row+j, 0, dictStrings[x])
					if !c.plain {
						remap[x] = c.lastID
					}
				}
				return nil
			}, changed)
		case t.kind == kindOptStr && dictIdx != nil && len(defs) > 0:
			// The usual optional string page: the same with the levels;
			// a null, or an old "" (null to optStr), is a null.
			err = eachRun(rows, func(j, end int) error {
				for ; j < end; j++ {
					if defs[j] == 0 {
						c.def = append(c.def, 0)
						c.nulls++
						continue
					}
					if v >= nvals {
						return errFewerValues
					}
					x := dictIdx[v]
					v++
					if id := remap[x]; id >= 0 && !c.plain {
						c.def = append(c.def, 1)
						c.idx = append(c.idx, id)
						continue
					}
					c.optStr(dictStrings[x])
					if !c.plain && dictStrings[x] != "" {
						remap[x] = c.lastID
					}
				}
				return nil
			}, changedOpt)
		default:
			err = errSlowPage
		}
		if err != errSlowPage {
			row += rows
			return err
		}
		if ints != nil {
			// The general path takes words: an INT32 page's values
			// widened, through the page's dictionary if it has one (not
			// from our writer; the page's values stay as read).
			wordBuf = slices.Grow(wordBuf[:0], len(ints))[:len(ints)]
			words = wordBuf
			if d := p.Dictionary(); d != nil {
				dict := values(d.Page()).Int32()
				for j, x := range ints {
					if x < 0 || int(x) >= len(dict) {
						return errDictIndex
					}
					words[j] = int64(dict[x])
				}
			} else {
				for j, v := range ints {
					words[j] = int64(v)
				}
			}
		}
		if dictIdx != nil {
			// A dictionary page: each old index maps to one id of the
			// new chunk's dictionary, looked up once.
			v = 0
			for j := range pageRows(defs, nvals) {
				x := int32(-1)
				if len(defs) == 0 || defs[j] != 0 {
					if v >= nvals {
						return errFewerValues
					}
					x = dictIdx[v]
					v++
				}
				switch {
				case next < len(sel) && int(sel[next]) == row+j:
					emit(row+j, 0, "")
				case x < 0 || (t.kind == kindOptStr && dictStrings[x] == ""):
					c.optStr("")
				case remap[x] >= 0 && !c.plain:
					if t.kind == kindOptStr {
						c.def = append(c.def, 1)
					}
					c.idx = append(c.idx, remap[x])
				default:
					emit(row+j, 0, dictStrings[x])
					if !c.plain {
						remap[x] = c.lastID
					}
				}
			}
			row += pageRows(defs, nvals)
			return nil
		}
		v = 0 // the general path reads the page from its start
		for j := range pageRows(defs, nvals) {
			var w int64
			var s string
			if len(defs) == 0 || defs[j] != 0 {
				if v >= nvals {
					return errFewerValues
				}
				if strs != nil {
					s = strs(v)
				} else {
					w = words[v]
				}
				v++
			}
			emit(row+j, w, s)
		}
		row += pageRows(defs, nvals)
		return nil
	})
	if err := complete(err, row, n); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	c.hasStats = c.lo <= c.hi && k != cActivity
	return nil
}
