package rowio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/parquet-go/parquet-go"
)

// Reader reads rows of type T from a Parquet file or an Arrow IPC stream.
type Reader[T any] struct {
	name  string
	f     *os.File
	pf    *parquet.File // for its key-value metadata
	view  io.ReaderAt   // what pf reads: f, or a view of it (openParquetFile)
	pr    *parquet.GenericReader[T]
	prows *ParquetRows[T] // reads pr
	ar    *ipc.Reader
	frame *framedReader   // what ar reads
	alloc *limitAllocator // the Arrow reader's
	bind  []binding
	rec   arrow.Record
	// dense is the stream's schema with its dictionary-encoded columns
	// decoded (denseSchema; nil when it has none), and drec the batch
	// decoded so, rec then, which the reader releases (arrow_dict.go).
	dense *arrow.Schema
	drec  arrow.Record
	pos   int
	rows  int64 // Arrow rows so far
	err   error // sticky: a reader that failed stays failed
	// absent are the list fields of T the Parquet file has no column
	// for, emptied after each Read (absentLists).
	absent   [][]int
	unsigned unsignedCheck // of the Parquet file's UBIGINT columns
	narrow   *narrowCheck  // of its INT32 ones past their fields
}

// Open opens a row source: "-" reads an Arrow IPC stream from stdin,
// anything else a Parquet file. The input's columns are checked against
// T: a missing required column or an incompatible type is an ErrSchema.
func Open[T any](path string, stdin io.Reader) (*Reader[T], error) {
	var zero T
	pl := planOf(reflect.TypeOf(zero))
	if path == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		return openArrow[T]("stdin", bufio.NewReaderSize(stdin, 1<<20), pl, nil, DefaultLimits())
	}
	return OpenLimited[T](path, DefaultLimits())
}

// OpenLimited is Open for a Parquet file at path, read within lim (Open
// reads within DefaultLimits).
func OpenLimited[T any](path string, lim Limits) (*Reader[T], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := openParquet[T](path, f, lim)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// OpenArrow reads an Arrow IPC stream from r, naming it name in errors.
func OpenArrow[T any](name string, r io.Reader) (*Reader[T], error) {
	var zero T
	return openArrow[T](name, r, planOf(reflect.TypeOf(zero)), nil, DefaultLimits())
}

// OpenArrowLimited is OpenArrow within lim: of its own limits, only
// MaxValueBytes (arrow_valuelimit.go) differs from the defaults that
// OpenArrow reads within.
func OpenArrowLimited[T any](name string, r io.Reader, lim Limits) (*Reader[T], error) {
	var zero T
	return openArrow[T](name, r, planOf(reflect.TypeOf(zero)), nil, lim)
}

// OpenArrowText is OpenArrow, but the []byte fields of T named in text
// also take a string column (utf8, large_utf8), whose values they read
// as bytes: a hash column of text holds hex, which the caller decodes
// (ArrowTextType tells it which columns are text). Elsewhere a string
// column for a []byte field is an ErrSchema, as its bytes are no hash.
// The string fields of T named in text also take a binary column
// (binary, large_binary, binary_view: a BLOB), read as a string of its
// bytes, which the caller checks (UTF-8, say): elsewhere that column is
// an ErrSchema. A string field of a list of structs is named
// "list.field" (peer_failures.addr).
func OpenArrowText[T any](name string, r io.Reader, text ...string) (*Reader[T], error) {
	var zero T
	return openArrow[T](name, r, planOf(reflect.TypeOf(zero)), text, DefaultLimits())
}

// OpenArrowTextLimited is OpenArrowText within lim (OpenArrowLimited).
func OpenArrowTextLimited[T any](name string, r io.Reader, lim Limits, text ...string) (*Reader[T], error) {
	var zero T
	return openArrow[T](name, r, planOf(reflect.TypeOf(zero)), text, lim)
}

func openArrow[T any](name string, in io.Reader, pl *plan, text []string, lim Limits) (_ *Reader[T], err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %w", name, PanicError(p, "Arrow IPC stream"))
		}
	}()
	alloc := newLimitAllocator(lim)
	frame := &framedReader{r: in, lim: lim}
	ar, err := ipc.NewReader(frame, ipc.WithAllocator(alloc))
	if err != nil {
		if ce, ok := AsCut(err); ok {
			return nil, fmt.Errorf("%s: %w", name, ce)
		}
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty input (no Arrow IPC stream)", name)
		}
		if err = ourReason(err); errors.As(err, new(*CorruptError)) {
			err = err.(*CorruptError).Err
		}
		return nil, fmt.Errorf("%s: not an Arrow IPC stream: %w", name, err)
	}
	dense := denseSchema(ar.Schema())
	shown := ar.Schema()
	if dense != nil {
		shown = dense
	}
	b, err := pl.bind(shown, text)
	if err != nil {
		cols := make([]string, 0, ar.Schema().NumFields())
		for _, f := range ar.Schema().Fields() {
			cols = append(cols, f.Name)
		}
		ar.Release()
		return nil, fmt.Errorf("%s: %w", name, &SchemaError{Columns: cols, Err: err})
	}
	frame.watch = arrowWatch(ar.Schema(), lim) // NewReader read the schema, no batch
	return &Reader[T]{name: name, ar: ar, frame: frame, alloc: alloc, bind: b, dense: dense}, nil
}

func openParquet[T any](path string, f *os.File, lim Limits) (_ *Reader[T], err error) {
	defer func() {
		if p := recover(); p != nil { // schema conversion of a crafted schema
			err = fmt.Errorf("%s: %w", path, PanicError(p, "Parquet"))
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var zero T
	want := parquet.SchemaOf(zero)
	pf, view, err := openParquetFile(f, st.Size(), want, lim, false, Names(want))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// A column stored as another type than it is read as first: its
	// pages would be decoded as what they are not, and CheckSchema would
	// name the type it is read as.
	for _, col := range want.Columns() {
		if err = StoredTypeError(pf, col...); err != nil {
			break
		}
	}
	if err == nil {
		err = CheckSchema(want, pf.Schema())
	}
	if err != nil {
		var cols []string
		for _, f := range pf.Schema().Fields() {
			cols = append(cols, f.Name())
		}
		return nil, fmt.Errorf("%s: %w", path, &SchemaError{Columns: cols, Err: err})
	}
	pr := parquet.NewGenericReader[T](pf)
	rt := reflect.TypeFor[T]()
	return &Reader[T]{name: path, f: f, pf: pf, view: view, pr: pr, prows: NewParquetRows(pr),
		absent: absentLists(rt, want, pf.Schema()), unsigned: unsignedCheckOf(rt, pf.Schema()),
		narrow: narrowCheckOf(rt, pf)}, nil
}

// Read fills buf with up to len(buf) rows; it returns io.EOF at the end.
// From an Arrow stream it returns the rows of the record batches already
// received rather than wait for the next one (fewer than len(buf)).
// A decoding failure (a CorruptError, or an error wrapping ErrLimit)
// names the input, and every later Read returns it again.
func (r *Reader[T]) Read(buf []T) (n int, err error) {
	if r.err != nil {
		return 0, r.err
	}
	defer func() {
		if err != nil && !errors.Is(err, io.EOF) {
			r.err = err
		}
	}()
	if r.pr != nil {
		defer r.recoverParquet(&err)
		// parquet-go reads a null optional []byte into a reused row as an
		// empty, non-nil slice: prows.Read starts from zero rows so that
		// null stays nil.
		n, err := r.prows.Read(buf)
		NormalizeNulls(buf[:n])
		if len(r.absent) > 0 {
			clearAbsent(buf[:n], r.absent)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			err = fmt.Errorf("%s: %w", r.name, &CorruptError{Format: "Parquet", Err: err})
		}
		if k, uerr := r.checkInts(buf[:n]); uerr != nil {
			return k, fmt.Errorf("%s: %w", r.name, uerr) // the rows before it are read
		}
		return n, err
	}
	defer r.recover(&err, "Arrow IPC stream")
	return r.readArrow(buf)
}

// recoverParquet is recover for a Parquet file: a panic on a page whose
// dictionary indexes run past its dictionary names the page (by its
// offset in the file, not in the view parquet-go read).
func (r *Reader[T]) recoverParquet(err *error) {
	p := recover()
	if p == nil {
		return
	}
	*err = fmt.Errorf("%s: %w", r.name, PanicError(p, "Parquet"))
	if errors.Is(*err, ErrCorrupt) {
		var zero T
		if e := dictIndexError(r.view, r.pf, parquet.SchemaOf(zero)); e != nil {
			*err = fmt.Errorf("%s: %w", r.name, e)
		}
	}
}

// recover is Recover naming the input.
func (r *Reader[T]) recover(err *error, format string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s: %w", r.name, PanicError(p, format))
	}
}

func (r *Reader[T]) readArrow(buf []T) (int, error) {
	var zero T
	n := 0
	for n < len(buf) {
		if r.rec == nil || r.pos >= int(r.rec.NumRows()) {
			if n > 0 {
				// Return what the last batch gave before waiting for the
				// next: a writer flushes each batch so that a reader
				// downstream acts on it at once (fetch starts its jobs).
				return n, nil
			}
			if !r.ar.Next() {
				if err := r.ar.Err(); err != nil {
					return n, fmt.Errorf("%s: %w", r.name, r.reason(err))
				}
				if err := r.frame.afterEnd(); err != nil {
					return n, fmt.Errorf("%s: %w", r.name, err)
				}
				return 0, io.EOF
			}
			if err := r.nextBatch(); err != nil {
				return n, err
			}
		}
		buf[n] = zero
		dst := reflect.ValueOf(&buf[n]).Elem()
		if err := fill(r.bind, r.rec.Column, r.pos, dst); err != nil {
			if p, ok := errors.AsType[placed](err); ok { // its row in the stream, not the batch
				p.place().Row = r.rows - r.rec.NumRows() + int64(r.pos)
			}
			return n, fmt.Errorf("%s: %w", r.name, err)
		}
		r.pos++
		n++
	}
	return n, nil
}

// RequireEndMarker makes an Arrow stream that ends between two messages
// without its end-of-stream marker fail, after its rows, with a CutError
// whose NoEnd is set, instead of reading as whole. The IPC format lets a
// writer end a stream by closing it, and arrow's reader takes both ends
// for the same, but every writer we know of writes the marker
// (arrow-go's ipc.Writer.Close, pyarrow, arrow-rs, and capture and fetch
// even when interrupted): a stream without it on a pipe is most likely
// one whose writer was killed between two batches. Call it before the
// first Read or Record; it does nothing for Parquet.
func (r *Reader[T]) RequireEndMarker() {
	if r.frame != nil {
		r.frame.needEnd = true
	}
}

// RecycleBuffers makes an Arrow stream's reader reuse the memory of each
// record batch for the next ones, which reads a large stream several
// times faster. The caller must then copy whatever it keeps of a batch
// (strings and byte slices read from it alias its buffers) before asking
// for the next batch or rows.
func (r *Reader[T]) RecycleBuffers() {
	if r.alloc != nil {
		r.alloc.recycle.Store(true)
	}
}

// ArrowSchema is an Arrow stream's schema (nil for Parquet), with the
// plain type of each dictionary-encoded column the reader decodes.
func (r *Reader[T]) ArrowSchema() *arrow.Schema {
	if r.ar == nil {
		return nil
	}
	if r.dense != nil {
		return r.dense
	}
	return r.ar.Schema()
}

// ParquetSchema is a Parquet file's schema, with its columns named as
// read (OpenParquetFold); nil for an Arrow stream.
func (r *Reader[T]) ParquetSchema() *parquet.Schema {
	if r.pf == nil {
		return nil
	}
	return r.pf.Schema()
}

// Record returns the next record batch of an Arrow stream, for readers
// that take its columns whole instead of rows (Read and Record do not
// mix); it is valid until the next call, and io.EOF ends the stream. The
// batch's columns have the types ArrowSchema says (the stream's, but for
// its dictionary-encoded columns, decoded), which Open checked against
// T's (see bind); a failure names the input, as Read's do.
func (r *Reader[T]) Record() (rec arrow.Record, err error) {
	if r.ar == nil {
		return nil, fmt.Errorf("%s: not an Arrow stream", r.name)
	}
	if r.err != nil {
		return nil, r.err
	}
	defer func() {
		if err != nil && !errors.Is(err, io.EOF) {
			r.err = err
		}
	}()
	defer r.recover(&err, "Arrow IPC stream")
	if !r.ar.Next() {
		if err := r.ar.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, r.reason(err))
		}
		if err := r.frame.afterEnd(); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		return nil, io.EOF
	}
	if err := r.nextBatch(); err != nil {
		return nil, err
	}
	return r.rec, nil
}

// nextBatch makes the record batch the arrow reader has just read the
// current one, checked (checkBatch), its dictionary-encoded columns
// decoded (undict).
func (r *Reader[T]) nextBatch() error {
	r.rec, r.pos = r.ar.Record(), 0
	if err := r.checkBatch(); err != nil {
		return err
	}
	if r.drec != nil {
		r.drec.Release()
		r.drec = nil
	}
	if r.dense == nil {
		return nil
	}
	rec, err := undict(r.rec, r.dense, r.frame.lim)
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.rec, r.drec = rec, rec
	return nil
}

// reason is ourReason for an error of the stream after its schema: a
// cut one (CutError) gets the rows the reader returned before it.
func (r *Reader[T]) reason(err error) error {
	err = ourReason(err)
	if ce, ok := err.(*CutError); ok {
		c := *ce
		c.Rows = r.rows
		return &c
	}
	return err
}

// ourReason digs the error our checks gave out of arrow's layers of
// context ("could not read message schema: could not read continuation
// indicator: ..."), which would bury the one line that matters.
func ourReason(err error) error {
	var ce *CorruptError
	var cut *CutError
	switch {
	case errors.As(err, &cut):
		return cut
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, ErrLimit):
		return innermost(err, ErrLimit)
	}
	return err
}

// innermost returns the deepest error in err's chain that wraps target.
func innermost(err, target error) error {
	for e := err; e != nil && e != target; e = errors.Unwrap(e) {
		if errors.Is(e, target) {
			err = e
		}
	}
	return err
}

// checkBatch bounds the rows an Arrow stream declares, as OpenParquet
// does for row groups, and checks the batch's columns (checkColumns).
func (r *Reader[T]) checkBatch() error {
	lim := r.frame.lim // the limits the stream is read within (OpenArrowLimited's)
	k := r.rec.NumRows()
	if r.rows += k; k > lim.MaxRowGroupRows || r.rows > lim.MaxRows {
		return fmt.Errorf("%s: %w: a record batch of %d rows, %d in all (limits %d and %d)",
			r.name, ErrLimit, k, r.rows, lim.MaxRowGroupRows, lim.MaxRows)
	}
	if err := checkColumns(r.rec); err != nil {
		return fmt.Errorf("%s: %w", r.name, &CorruptError{Format: "Arrow IPC stream",
			Err: fmt.Errorf("the record batch from row %d: %w", r.rows-k+1, err)})
	}
	return nil
}

// ReadAll reads every remaining row.
func (r *Reader[T]) ReadAll() ([]T, error) {
	var out []T
	buf := make([]T, 1024)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// Close releases the input.
func (r *Reader[T]) Close() error {
	if r.pr != nil {
		r.pr.Close()
		r.narrow.close()
		return r.f.Close()
	}
	if r.drec != nil {
		r.drec.Release()
		r.drec = nil
	}
	r.ar.Release()
	return nil
}
