package rowio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// rowGroupBytes is the most a ParquetWriter buffers for one row group
// before it writes it out (a variable for tests). Pages are compressed as
// they fill, so this counts compressed pages plus the page being filled.
var rowGroupBytes int64 = 64 << 20

// ParquetWriter writes rows of T as Parquet with parquet-go's
// GenericWriter, ending a row group at its row limit (MaxRowsPerRowGroup)
// or once it holds about 64 MiB, whichever comes first. parquet-go keeps
// a whole row group in memory until it writes it, and a row can carry an
// info dictionary of up to 10 MiB: by rows alone, 1024 of them made a
// row group of 10 GiB.
type ParquetWriter[T any] struct {
	pw *parquet.GenericWriter[T]
	// buf is the write buffer parquet-go would keep (WriteBufferSize),
	// kept here instead so that Flush can empty it.
	buf    *bufio.Writer
	out    countingWriter
	rows   int  // rows written since the byte bound was last checked
	blob   int  // their blob bytes (blobSizer)
	closed bool // Close was called
	// res, when set, reserves the file's space ahead of the rows
	// (reserve.go): need is what finishing the file took at the last
	// check, reserved what res has reserved; groups counts the row
	// groups Flush ended, of cols column chunks each.
	res            reserver
	name           string
	need, reserved int64
	groups, cols   int
	full           error // the *FullError that ended the reservations
	// maxRows is the row group size of pw's options; groupRows the rows
	// in its row group under way (see writeBatch).
	maxRows, groupRows int64
}

// NewParquetWriter writes Parquet to w with ParquetOptions, then opts.
// Close writes the footer; it does not close w.
func NewParquetWriter[T any](w io.Writer, opts ...parquet.WriterOption) *ParquetWriter[T] {
	p := &ParquetWriter[T]{out: countingWriter{w: w}}
	p.buf = bufio.NewWriterSize(&p.out, parquetBuffer)
	opts = append(append(ParquetOptions(), opts...), parquet.WriteBufferSize(0))
	p.pw = parquet.NewGenericWriter[T](p.buf, opts...)
	p.maxRows = maxRowsOf(opts)
	return p
}

// parquetBuffer is the size of a ParquetWriter's write buffer (parquet-go's
// default).
const parquetBuffer = 32 << 10

// Flush ends the row group under way, if it holds rows, and writes out
// everything buffered: every row written so far reaches the output (a
// full disk fails Flush, not Close). Each call that ends a row group
// adds one to the file.
func (p *ParquetWriter[T]) Flush() error {
	p.groups++
	p.groupRows = 0
	if err := p.pw.Flush(); err != nil {
		return err
	}
	return p.buf.Flush()
}

// Write appends rows in batches parquet-go writes rightly (writeBatch)
// and ends the row group whenever it has grown past the byte bound.
// parquet-go's Size sums every column's buffer, so the bound is checked
// every 64 rows (checked per row, it made a 20M-row state export 20-40%
// slower), or sooner once the rows' blob values (one can be 10 MiB) reach
// blobCheckBytes; a writer that reserves its space checks before each row
// with blob values.
func (p *ParquetWriter[T]) Write(rows []T) (int, error) {
	sizer := sizerOf(reflect.TypeFor[T]())
	if p.full != nil {
		return p.writeTight(rows, sizer)
	}
	var full error
	defer func() {
		if full != nil {
			p.full = full
		}
	}()
	for i := 0; i < len(rows); {
		j, b := min(i+64, len(rows)), 0
		if len(sizer) > 0 {
			// Up to the next check: one row when reserving, else the rows
			// that take the count to 64 or the blob bytes to blobCheckBytes.
			j = i
			for j < len(rows) {
				b += sizer.size(reflect.ValueOf(&rows[j]).Elem())
				j++
				if p.res != nil || p.rows+j-i >= 64 || p.blob+b >= blobCheckBytes {
					break
				}
			}
		}
		if p.res != nil && b > 0 {
			// Before a row with blob values: room for them (uncompressed,
			// plus the page index's share) and for those not checked yet.
			extra := int64(p.blob + b)
			fits, err := p.ensure(extra + extra/pageIndexShare)
			if !fits {
				full = err
				return i, err
			}
			full = err
		}
		if n, err := p.writeBatch(rows[i:j]); err != nil {
			return i + n, err
		}
		p.rows += j - i
		p.blob += b
		if full != nil {
			return j, full
		}
		i = j
		if p.rows < 64 && p.blob < blobCheckBytes {
			continue
		}
		p.rows, p.blob = 0, 0
		if p.res != nil {
			p.need = p.needed()
			if _, err := p.ensure(0); err != nil {
				if errors.Is(err, ErrOutputFull) {
					full = err
				}
				return j, err
			}
		}
		// What parquet-go estimates the file to be, less what has reached
		// the output: the row group, and at most its write buffer (32 KiB).
		if p.pw.Size()-p.out.n >= rowGroupBytes {
			p.groups++
			p.groupRows = 0
			if err := p.pw.Flush(); err != nil {
				return j, err
			}
		}
	}
	return len(rows), nil
}

// writeBatch hands rows to parquet-go in as few Write calls as write
// them rightly: batches safeRun checked, each within one row group (so
// that parquet-go does not split it), or one row a call (WriteParquet)
// for a type whose optional columns batchPlan cannot model.
func (p *ParquetWriter[T]) writeBatch(rows []T) (int, error) {
	plan := batchPlanOf[T]()
	if !plan.ok || !hasOptional[T]() {
		return WriteParquet(p.pw, rows)
	}
	size := reflect.TypeFor[T]().Size()
	done := 0
	for done < len(rows) {
		if p.groupRows >= p.maxRows {
			p.groupRows = 0 // parquet-go starts the next row group
		}
		n := int(min(int64(len(rows)-done), p.maxRows-p.groupRows))
		n = plan.safeRun(unsafe.Pointer(&rows[done]), size, n)
		k, err := p.pw.Write(rows[done : done+n])
		p.groupRows += int64(k)
		done += k
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// blobCheckBytes is how much blob data ParquetWriter.Write lets pass
// between two checks of the byte bound.
const blobCheckBytes = 1 << 20

// SetKeyValueMetadata records key = value in the file's key-value
// metadata.
func (p *ParquetWriter[T]) SetKeyValueMetadata(key, value string) {
	p.pw.SetKeyValueMetadata(key, value)
}

// Close writes the last row group, the page index and the footer. For a
// type with a blob column it holds the last two back and writes them
// without the blob columns' column indexes (dropBlobIndexes).
func (p *ParquetWriter[T]) Close() error {
	if p.closed {
		return errors.New("parquet: writer already closed")
	}
	p.closed = true
	if !hasBlob[T]() {
		if err := p.pw.Close(); err != nil {
			return err
		}
		return p.buf.Flush()
	}
	// The last row group goes out first: only the page index and the
	// footer are held back.
	if err := p.Flush(); err != nil {
		return err
	}
	start := p.out.n
	p.out.hold = new(bytes.Buffer)
	err := p.pw.Close()
	if err == nil {
		err = p.buf.Flush() // into hold
	}
	tail := p.out.hold.Bytes()
	p.out.hold = nil
	if err != nil {
		return err
	}
	if tail, err = dropBlobIndexes(tail, start); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	_, err = p.out.Write(tail)
	return err
}

// countingWriter counts the bytes written to w; while hold is set it
// keeps them there instead (counted once written to w).
type countingWriter struct {
	w    io.Writer
	n    int64
	hold *bytes.Buffer
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.hold != nil {
		return c.hold.Write(b)
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// hasBlob reports whether T's Parquet schema has one of blobColumns.
func hasBlob[T any]() bool {
	return slices.ContainsFunc(parquet.SchemaOf(reflect.New(reflect.TypeFor[T]()).Interface()).Columns(), isBlob)
}
