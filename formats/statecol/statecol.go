// Package statecol reads state files column by column, page by page,
// straight into schema.State values (or into the caller's own arrays):
// several times faster than parquet-go's row reader, which reconstructs
// every row through reflection. plan-retries and merge read the whole
// state on every pass, so this is their hot path.
package statecol

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// File is an open Parquet file whose row groups are read column by
// column.
type File struct {
	f    *os.File
	r    io.ReaderAt // f, through sum (if any): every read of the file goes through it
	pf   *parquet.File
	keep *pageKeep  // pages kept during a splice
	bufs *deltaBufs // readDeltaInt64's, from deltaPool until Close
	// sum checks the whole file against the manifest's record of it
	// (rowio.DataFile.Sum; nil if none): in every Splice, and in a full
	// read (ReadAllInto) of a WholeChecked file (whole).
	sum   *rowio.FileSummer
	whole bool
}

// Open opens the state file f, one of the dataset's own (written by
// infohash, CRC-checked by "status --verify"), which may be damaged on
// disk but is not crafted. Its footer and page headers are checked
// against rowio.DefaultLimits before parquet-go decodes anything
// (rowio.OpenOwnParquet: a damaged page size made parquet-go allocate up
// to 2.8 GB for one page), but not what is inside pages, which carry a
// CRC that parquet-go checks before decoding them; and a panic while
// decoding the file becomes an error. Use OpenUntrusted for files from
// elsewhere.
//
// The file must have every state column, with the type and levels the
// writer gives it, but those f lacks (rowio.DataFile.Lacks): the columns
// the dataset's format version predates (dataset.Manifest.StateLacks),
// which read as zero values. A column missing otherwise is damage (a
// flipped bit in its name in the footer), a CorruptError naming the file:
// read as zeros, it would be written back as zeros by the next commit.
//
// Before any of that, the file's footer is checked against the checksum
// its dataset's manifest recorded (rowio.DataFile.Footer, which
// dataset.Dataset.DataFile takes from the manifest): the page CRCs do not
// cover the footer, whose statistics readers act on (AllNull) and Splice
// copies. A mismatch is a *rowio.FooterError naming the file. An
// unrecorded file (rowio.UnrecordedFile), or one of an older dataset
// format, has no checksum to check.
//
// The whole file is checked against the size and CRC-32C the manifest
// records (rowio.DataFile.Sum) by Splice, and by a full read
// (ReadAllInto) of a WholeChecked file, on the bytes they read
// (rowio.FileSummer): a writer does not carry damage the page CRCs miss
// into a new file.
func Open(f rowio.DataFile) (*File, error) {
	return openFile(f, true, rowio.DefaultLimits())
}

// OpenUntrusted is Open for a state file from elsewhere (another dataset
// given to merge), which may be crafted: every page's compression frames
// and levels are also checked before anything is decoded (rowio.OpenParquet),
// so that a crafted page, CRC and all, cannot make the reader allocate
// without bound.
func OpenUntrusted(f rowio.DataFile) (*File, error) {
	return openFile(f, false, rowio.DefaultLimits())
}

// OpenUntrustedWithin is OpenUntrusted within lim (merge --from bounds
// the other dataset's string values: lim.MaxValueBytes).
func OpenUntrustedWithin(f rowio.DataFile, lim rowio.Limits) (*File, error) {
	return openFile(f, false, lim)
}

func openFile(df rowio.DataFile, own bool, lim rowio.Limits) (_ *File, err error) {
	path := df.Path()
	f, r, sum, size, err := df.OpenSummed() // checks the footer before anything reads it
	if err != nil {
		return nil, err // it names path
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	defer recoverCorrupt(&err, path)
	var pf *parquet.File
	if own {
		pf, err = rowio.OpenOwnParquet(r, size, lim)
	} else {
		pf, err = rowio.OpenParquet(r, size, nil, lim)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := rowio.CheckTable(pf, stateSchema(), stateFormat, df.Lacks()...); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{f: f, r: r, pf: pf, sum: sum, whole: df.ChecksWhole()}, nil
}

// stateSchema is the schema of a state file, as parquet-go derives it
// from schema.State (and WriteState writes it).
var stateSchema = sync.OnceValue(func() *parquet.Schema { return parquet.SchemaOf(schema.State{}) })

// stateFormat names state files in errors about damaged ones.
const stateFormat = "Parquet state file"

// recoverCorrupt turns a panic while decoding the state file at path
// into a CorruptError in *err. Deferred by every exported reader: a
// damaged file must fail the command that reads it, not crash it.
func recoverCorrupt(err *error, path string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s: %w", path, rowio.PanicError(p, stateFormat))
	}
}

// Close closes the file.
func (f *File) Close() error {
	f.releasePages()
	if f.bufs != nil {
		putDeltaBufs(f.bufs)
		f.bufs = nil
	}
	return f.f.Close()
}

// NumRows is the file's row count.
func (f *File) NumRows() int64 { return f.pf.NumRows() }

// RowGroups returns the file's row groups.
func (f *File) RowGroups() []parquet.RowGroup { return f.pf.RowGroups() }

// Column returns the leaf column at path of row group rg, and its maximum
// definition level: a nil chunk for a column the file lacks, which Open
// allows only for those its lacks named.
func (f *File) Column(rg parquet.RowGroup, path ...string) (parquet.ColumnChunk, int) {
	l, ok := f.pf.Schema().Lookup(path...)
	if !ok {
		return nil, 0
	}
	cc := rg.ColumnChunks()[l.ColumnIndex]
	if f.keep != nil {
		if kp := f.keep.cols[l.ColumnIndex]; kp != nil {
			return keptChunk{cc, kp}, l.MaxDefinitionLevel
		}
	}
	return cc, l.MaxDefinitionLevel
}

// unkept is the file's own chunk under c (a keptChunk wraps it).
func unkept(c parquet.ColumnChunk) parquet.ColumnChunk {
	if kc, ok := c.(keptChunk); ok {
		return kc.ColumnChunk
	}
	return c
}

// AllNull reports whether the column chunk c of a row group of rows rows
// holds only nulls, from its statistics alone (nothing is decoded): true
// only when the writer recorded a null count of rows. A writer that
// records no null count leaves it 0, so an unknown chunk reads false and
// is decoded as usual.
func AllNull(c parquet.ColumnChunk, rows int64) bool {
	fc, ok := unkept(c).(*parquet.FileColumnChunk)
	return ok && rows > 0 && fc.NullCount() == rows
}

// values returns a page's (non-null) values.
func values(p parquet.Page) *encoding.Values {
	v := p.Data()
	return &v
}

// EachPage calls fn for every page of a column chunk, releasing it after.
// A panic while decoding a (damaged) page is returned as a CorruptError.
func EachPage(c parquet.ColumnChunk, fn func(parquet.Page) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = rowio.PanicError(p, stateFormat)
		}
	}()
	if kc, ok := c.(keptChunk); ok {
		return kc.each(fn)
	}
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

// rows walks the rows a page covers: for a required column every value
// is a row; for an optional one the definition levels say which rows
// hold a value. set receives the row and the index of its value, or -1
// for a null row (the readers then set the zero value, so a reused
// buffer needs no clearing for the columns read).
func rows(p parquet.Page, row *int, n int, nvals int, set func(row, v int)) error {
	defs := p.DefinitionLevels()
	if len(defs) == 0 {
		if *row+nvals > n {
			return errors.New("more values than rows")
		}
		for v := range nvals {
			set(*row, v)
			*row++
		}
		return nil
	}
	if *row+len(defs) > n {
		return errors.New("more values than rows")
	}
	v := 0
	for _, d := range defs {
		if d > 0 {
			if v >= nvals {
				return errors.New("fewer values than definition levels")
			}
			set(*row, v)
			v++
		} else {
			set(*row, -1)
		}
		*row++
	}
	return nil
}

func complete(err error, got, want int) error {
	if err == nil && got != want {
		err = fmt.Errorf("%d values for %d rows", got, want)
	}
	return err
}

// Int64 reads an int64 column of n rows (a null is 0).
func Int64(c parquet.ColumnChunk, n int, set func(row int, v int64)) error {
	return numbers(c, n, set, func(v *encoding.Values) []int64 { return v.Int64() })
}

// Int32 reads an int32 column (a null is 0).
func Int32(c parquet.ColumnChunk, n int, set func(row int, v int32)) error {
	return numbers(c, n, set, func(v *encoding.Values) []int32 { return v.Int32() })
}

// Double reads a double column (a null is 0).
func Double(c parquet.ColumnChunk, n int, set func(row int, v float64)) error {
	return numbers(c, n, set, func(v *encoding.Values) []float64 { return v.Double() })
}

// numbers reads a numeric column of n rows, a page's values taken by of.
func numbers[T int32 | int64 | float64](c parquet.ColumnChunk, n int, set func(row int, v T), of func(*encoding.Values) []T) error {
	row := 0
	err := EachPage(c, func(p parquet.Page) error {
		vs := of(values(p))
		return rows(p, &row, n, len(vs), func(r, v int) {
			if v < 0 {
				set(r, 0)
			} else {
				set(r, vs[v])
			}
		})
	})
	return complete(err, row, n)
}

// Fixed reads a required fixed-size byte array column into out (size
// bytes per row).
func Fixed(c parquet.ColumnChunk, size int, out []byte) error {
	at := 0
	err := EachPage(c, func(p parquet.Page) error {
		if len(p.DefinitionLevels()) > 0 {
			return errors.New("optional fixed-size column")
		}
		buf, sz := values(p).FixedLenByteArray()
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

// String reads a string column, plain or dictionary-encoded. Values from
// a dictionary are shared strings (one allocation per dictionary entry).
func String(c parquet.ColumnChunk, n int, set func(row int, s string)) error {
	row := 0
	err := EachPage(c, func(p parquet.Page) error {
		if d := p.Dictionary(); d != nil {
			dict := make([]string, d.Len())
			for i := range dict {
				dict[i] = string(d.Index(int32(i)).ByteArray())
			}
			ix := values(p).Int32()
			return rows(p, &row, n, len(ix), func(r, v int) {
				if v < 0 {
					set(r, "")
				} else if k := ix[v]; k >= 0 && int(k) < len(dict) {
					set(r, dict[k])
				}
			})
		}
		buf, offs := values(p).ByteArray()
		return rows(p, &row, n, max(len(offs)-1, 0), func(r, v int) {
			if v < 0 {
				set(r, "")
			} else {
				set(r, string(buf[offs[v]:offs[v+1]]))
			}
		})
	})
	return complete(err, row, n)
}

// Bytes reads a byte array column; each value is a copy.
func Bytes(c parquet.ColumnChunk, n int, set func(row int, b []byte)) error {
	row := 0
	err := EachPage(c, func(p parquet.Page) error {
		buf, offs := values(p).ByteArray()
		return rows(p, &row, n, max(len(offs)-1, 0), func(r, v int) {
			if v < 0 {
				set(r, nil)
			} else {
				set(r, append([]byte(nil), buf[offs[v]:offs[v+1]]...))
			}
		})
	})
	return complete(err, row, n)
}

// StringLists reads a list<string> column (a required list of required
// strings, maxDef its leaf's maximum definition level): add is called for
// each element, in order.
func StringLists(c parquet.ColumnChunk, n, maxDef int, add func(row int, s string)) error {
	row := -1
	err := EachPage(c, func(p parquet.Page) error {
		reps, defs := p.RepetitionLevels(), p.DefinitionLevels()
		buf, offs := values(p).ByteArray()
		v := 0
		for i := range defs {
			if len(reps) == 0 || reps[i] == 0 {
				row++
				if row >= n {
					return errors.New("more lists than rows")
				}
			}
			if int(defs[i]) == maxDef {
				if v+1 >= len(offs) {
					return errors.New("fewer values than levels")
				}
				add(row, string(buf[offs[v]:offs[v+1]]))
				v++
			}
		}
		return nil
	})
	return complete(err, row+1, n)
}
