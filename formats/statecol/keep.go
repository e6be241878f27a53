// Keeping a row group's decoded pages between the two reads of a splice.

package statecol

import (
	"errors"
	"io"

	"github.com/parquet-go/parquet-go"
)

// pageKeep holds the decoded pages of some columns of the row group a
// splice is working on. The splice reads its columns twice: whole, to
// pick out the touched rows for fn, then the changed ones again to lay
// them out with fn's changes; kept, the second read decodes nothing
// (a Snappy or delta decode of every page of the changed columns was ~4%
// of an incremental dedup).
//
// Only numeric columns are kept: a string column's pages refer to a
// dictionary that its page reader owns and frees when closed.
type pageKeep struct {
	cols map[int]*keptPages // by leaf column index
}

// keptPages are a column chunk's pages, each holding the reference
// ReadPage gave; full once every page has been read. A chunk with
// dictionary-encoded pages (not from infohash's writer) is never kept:
// its dictionary goes with its page reader.
type keptPages struct {
	pages []parquet.Page
	full  bool
	never bool
	// ints are the values of a required INT64 chunk that readDeltaInt64
	// decoded (nil otherwise): the splice's readers take them instead of
	// pages (keptInt64s), which are then never read.
	ints []int64
}

// keptChunk is a column chunk whose pages EachPage keeps, or takes from
// the keep when a first pass has read them all.
type keptChunk struct {
	parquet.ColumnChunk
	k *keptPages
}

// keepPages starts keeping the pages of the columns in cols (numeric
// ones only) of row group rg (the file's i-th) until releasePages; the
// required INT64 columns of our writer's layout are decoded at once
// (readDeltaInt64), the others as they are read.
func (f *File) keepPages(cols Columns, i int, rg parquet.RowGroup) {
	f.releasePages()
	f.keep = &pageKeep{cols: map[int]*keptPages{}}
	for k := range numStateColumns {
		if cols&(1<<k) != 0 && transcodable[k].ok && transcodable[k].kind < kindStr {
			if l, ok := f.pf.Schema().Lookup(stateColumnNames[k]); ok {
				kp := &keptPages{}
				if transcodable[k].kind == kindInt64 {
					if ints, ok := f.readDeltaInt64(i, k, int(rg.NumRows())); ok {
						kp.ints = ints // its pages still read for a reader that asks
					}
				}
				f.keep.cols[l.ColumnIndex] = kp
			}
		}
	}
}

// keptInt64s returns the values of c when readDeltaInt64 decoded them.
func keptInt64s(c parquet.ColumnChunk) ([]int64, bool) {
	kc, ok := c.(keptChunk)
	if !ok || kc.k.ints == nil {
		return nil, false
	}
	return kc.k.ints, true
}

// releasePages releases every kept page and stops keeping.
func (f *File) releasePages() {
	if f.keep == nil {
		return
	}
	for _, kp := range f.keep.cols {
		kp.release()
	}
	f.keep = nil
}

func (kp *keptPages) release() {
	for _, p := range kp.pages {
		parquet.Release(p)
	}
	clear(kp.pages) // no reference to a released page stays behind
	kp.pages, kp.full = kp.pages[:0], false
}

// each calls fn for every page of the chunk: the kept ones, or read and
// kept.
func (kc keptChunk) each(fn func(parquet.Page) error) error {
	kp := kc.k
	if kp.full {
		for _, p := range kp.pages {
			if err := fn(p); err != nil {
				return err
			}
		}
		return nil
	}
	kp.release() // what an earlier pass that stopped short kept
	keep := !kp.never
	pages := kc.ColumnChunk.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			kp.full = keep
			return nil
		}
		if err != nil {
			return err
		}
		if keep && p.Dictionary() != nil {
			keep, kp.never = false, true
			kp.release()
		}
		if keep {
			kp.pages = append(kp.pages, p)
		}
		err = fn(p)
		if !keep {
			parquet.Release(p)
		}
		if err != nil {
			return err
		}
	}
}
