// Package rowio streams typed rows (the structs of formats/schema) in and
// out of the two forms infohash stages exchange: Parquet files, written
// atomically, and Arrow IPC streams on stdin/stdout for Unix pipelines.
// Create is for outputs the user names (-o); CreateInternal for files of
// the dataset itself.
//
//	w, _ := rowio.Create[schema.Job]("-", os.Stdout) // Arrow IPC on stdout
//	w, _ := rowio.Create[schema.Job]("jobs.parquet", nil)
//	r, _ := rowio.Open[schema.Job]("-", os.Stdin)
package rowio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/fieldaddr"
)

// Writer writes rows of type T.
type Writer[T any] struct {
	name string
	// parquet
	file *fsutil.File
	pw   *ParquetWriter[T]
	// arrow
	out  io.Writer // what bw writes to
	bw   *bufio.Writer
	aw   *ipc.Writer
	rb   *array.RecordBuilder
	pl   *plan
	app  []columnAppender  // pl's appenders, bound to rb's builders
	meta map[string]string // Arrow schema metadata (SetMetadata)
	sr   *streamReserve    // the reservations of a stream into a regular file (Reserve)
	n    int64
	err  error
	// batched: a record batch was written (StreamStarter's call made).
	batched bool
	// finished: Finish wrote the Parquet file out; Close only publishes it.
	finished bool
	// flushEvery > 0 makes Write write out the row group under way once
	// its first row is that old (pending, when it was written).
	flushEvery time.Duration
	pending    time.Time
}

// FlushInterval is how long a row may wait in the row group under way of
// a Parquet output a user asked for (Create, CreateWith) before Write
// writes it out. parquet-go holds a row group in memory until it is full
// (256 Ki rows or 64 MiB): a long capture or fetch would otherwise meet
// a full disk only then, or at Close, and lose its whole run; now within
// about this long, at the cost of smaller row groups for a slow writer.
// A variable for tests.
var FlushInterval = 30 * time.Second

// now is the clock of FlushInterval (a variable for tests).
var now = time.Now

// ParquetOptions are the writer options used for every Parquet file
// infohash writes: zstd, 32-byte column-index bounds, page statistics
// except on the blob columns.
func ParquetOptions() []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.Compression(zstdCodec),
		parquet.ColumnIndexSizeLimit(func([]string) int { return 32 }),
		parquet.MaxRowsPerRowGroup(256 * 1024),
	}
	for _, c := range blobColumns {
		opts = append(opts, parquet.SkipPageStatistics(c...), parquet.SkipPageBounds(c...))
	}
	return opts
}

// zstdCodec is every writer's: a parquet-go zstd.Codec pools its
// encoders, each with a history buffer of 8 MiB or more, and a codec per
// writer left them to the garbage collector file after file (a merge
// writing 256 torrents files held 200 MiB of them).
var zstdCodec = &zstd.Codec{Level: zstd.SpeedFastest}

// blobColumns are the columns (leaf paths) whose values can be megabytes:
// info_bytes (a whole info dictionary, up to 10 MiB) and the names and
// file paths taken from one (a hostile torrent can make one several MiB).
// They are written without min/max: parquet-go copies a page's bounds
// whole into its page header (four times: min, max and their deprecated
// twins, so a 4 MiB name made a header over the 16 MiB readers accept,
// and merge refused the whole results file), the column chunk's into the
// footer, and every page's into memory until the row group is written
// (for the page index, which ParquetWriter then leaves out for these
// columns: see dropBlobIndexes). No pruning is lost that mattered: rows
// are ordered by infohash, so every row group spans the alphabet of
// names anyway.
var blobColumns = [][]string{
	{"info_bytes"},
	{"name"},
	{"name_raw"},
	{"files", "list", "element", "path"},
	{"files", "list", "element", "path_raw"},
}

// isBlob reports whether the leaf column at path is one of blobColumns.
func isBlob(path []string) bool {
	return slices.ContainsFunc(blobColumns, func(b []string) bool { return slices.Equal(b, path) })
}

// Create opens a row sink for output a user asked for: path "-" is an
// Arrow IPC stream on stdout, anything else a Parquet file opened by
// fsutil.CreateOutput: committed atomically by Close (through a symbolic
// link to its target, with the umask's mode), or, for a FIFO or device,
// written in place.
func Create[T any](path string, stdout io.Writer, opts ...parquet.WriterOption) (*Writer[T], error) {
	return CreateWith[T](nil, path, stdout, opts...)
}

// CreateWith is Create opening a file output with open (nil:
// fsutil.CreateOutput), which lets the caller watch an output written in
// place.
func CreateWith[T any](open fsutil.Opener, path string, stdout io.Writer, opts ...parquet.WriterOption) (*Writer[T], error) {
	if path == "-" {
		if stdout == nil {
			stdout = os.Stdout
		}
		name := "stdout"
		if f, ok := stdout.(interface{ Name() string }); ok && stdout != io.Writer(os.Stdout) && f.Name() != "" {
			name = f.Name() // a file opened for the stream (-o FILE.arrows)
		}
		return NewArrowWriter[T](name, stdout), nil
	}
	if open == nil {
		open = fsutil.CreateOutput
	}
	w, err := createParquet[T](open, path, opts)
	if err == nil {
		w.flushEvery = FlushInterval
	}
	return w, err
}

// CreateInternal writes a Parquet file of the dataset itself (or another
// file only infohash reads) with fsutil.Create: a temporary file
// renamed onto path by Close, whatever path was.
func CreateInternal[T any](path string, opts ...parquet.WriterOption) (*Writer[T], error) {
	return createParquet[T](fsutil.Create, path, opts)
}

func createParquet[T any](create func(string) (*fsutil.File, error), path string, opts []parquet.WriterOption) (*Writer[T], error) {
	f, err := create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Writer[T]{name: path, file: f, pw: NewParquetWriter[T](f, opts...)}, nil
}

// NewArrowWriter writes an Arrow IPC stream of T rows to w (name labels
// errors). Close ends the stream and flushes; it does not close w.
func NewArrowWriter[T any](name string, w io.Writer) *Writer[T] {
	var zero T
	pl := planOf(reflect.TypeOf(zero))
	bw := bufio.NewWriterSize(w, 1<<20)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, pl.schema)
	return &Writer[T]{
		name: name,
		out:  w,
		bw:   bw,
		aw:   ipc.NewWriter(bw, ipc.WithSchema(pl.schema)),
		rb:   rb,
		pl:   pl,
		app:  pl.appenders(rb.Fields()),
	}
}

// Write appends rows. With Arrow output each call is one record batch,
// flushed so that a downstream reader sees it at once.
func (w *Writer[T]) Write(rows []T) error {
	if w.err != nil {
		return w.err
	}
	if w.finished {
		return fmt.Errorf("%s: rows written after Finish", w.name)
	}
	if len(rows) == 0 {
		return nil
	}
	if w.pw != nil {
		n, err := w.pw.Write(rows)
		w.n += int64(n)
		if fe, ok := errors.AsType[*FullError](err); ok {
			// The rows taken fit in the space reserved; Close writes
			// them. Later rows are taken while they fit (writeTight).
			return &FullError{Name: fe.Name, Err: fe.Err, Taken: n}
		}
		if err != nil {
			w.n += int64(len(rows) - n)
			return w.fail(err)
		}
		return w.flushDue()
	}
	w.n += int64(len(rows))
	appendRows(w.app, fieldaddr.OfSlice(rows), len(rows))
	err := w.writeRecord()
	if fe, ok := errors.AsType[*FullError](err); ok {
		w.n -= int64(len(rows)) // refused whole; Close ends the stream
		return &FullError{Name: fe.Name, Err: fe.Err}
	}
	return err
}

// flushDue ends the Parquet row group under way once its first row is
// flushEvery old: after each Write, as one.
func (w *Writer[T]) flushDue() error {
	if w.flushEvery <= 0 {
		return nil
	}
	switch t := now(); {
	case w.pending.IsZero():
		w.pending = t
	case t.Sub(w.pending) >= w.flushEvery:
		w.pending = time.Time{}
		if err := w.pw.Flush(); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// writeRecord writes the rows appended to the Arrow builders as one
// record batch, and flushes it to the output.
func (w *Writer[T]) writeRecord() error {
	rec := w.rb.NewRecord()
	defer rec.Release()
	if !w.batched {
		w.batched = true
		if s := starterOf(w.out); s != nil {
			if err := s.StartStream(); err != nil {
				w.err = fmt.Errorf("%s: %w", w.name, err)
				return w.err
			}
		}
	}
	if err := w.aw.Write(rec); err != nil {
		w.err = fmt.Errorf("%s: %w", w.name, err)
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("%s: %w", w.name, err)
		return w.err
	}
	if w.sr != nil {
		err := w.sr.flushBatch()
		if _, full := errors.AsType[*FullError](err); err != nil && !full {
			w.err = err
		}
		return err
	}
	return w.err
}

// fail records err, a failure to write the Parquet output, as the
// writer's error, saying what becomes of the output: the file is not
// kept (Close removes its temporary file), or, written in place, its
// reader has it cut short.
func (w *Writer[T]) fail(err error) error {
	what := "nothing was kept at " + w.name
	if w.file.InPlace() {
		what = "the stream on " + w.name + " is cut short"
	}
	w.err = fmt.Errorf("%s: %w (%s)", w.name, err, what)
	return w.err
}

// Reserve makes a Parquet file output (not one written in place: a
// no-op) reserve its disk space ahead of its rows
// (fallocate(2); see ParquetWriter's reservation), so that a full disk,
// quota or file size limit stops Write with an ErrOutputFull before rows
// that would not fit are taken, and Close can still complete the file
// with those written. An Arrow stream written into a regular file
// reserves ahead of its batches (streamReserve): a batch that does not
// fit is refused whole, and Close ends the stream after those written;
// into anything else (a pipe), Reserve is a no-op. The first
// reservation is taken now: an error
// (an ErrOutputFull when there is no room) means the output cannot be
// written at all; the caller aborts it.
func (w *Writer[T]) Reserve() error {
	if w.pw == nil {
		return w.reserveStream()
	}
	if w.file.InPlace() {
		return nil
	}
	return w.pw.startReserving(w.name, w.file)
}

// Name is the output's name in errors: its path, "stdout", or the name
// of the file a stream on stdout goes into (-o FILE.arrows).
func (w *Writer[T]) Name() string { return w.name }

// Rows reports how many rows were written.
func (w *Writer[T]) Rows() int64 { return w.n }

// InPlace reports whether the output is written where it goes as the
// rows come (a FIFO or device, or an Arrow stream): a reader may take
// them before Close, and what it took cannot be taken back.
func (w *Writer[T]) InPlace() bool { return w.pw == nil || w.file.InPlace() }

// ReaderGone reports whether w's output is a pipe or FIFO that no reader
// holds open any more (fsutil.ReaderGone): what w writes would be lost.
func (w *Writer[T]) ReaderGone() bool {
	if w.pw != nil {
		return fsutil.ReaderGone(w.file)
	}
	return fsutil.ReaderGone(w.out)
}

// Finish writes a Parquet file out whole under its temporary name (the
// last row group, the page index and the footer) and fsyncs it, so that
// a full disk fails Finish, and Close, which then only renames the file
// into place, has nothing left to write. A caller that may publish the
// file only after another step (plan-retries' commit) calls Finish
// before that step and Close after it. No rows may be written after it.
// An output written in place gets everything at once: it is no place to
// call Finish early (see InPlace).
func (w *Writer[T]) Finish() error {
	if w.pw == nil || w.finished || w.err != nil {
		return w.err
	}
	w.finished = true
	if err := w.pw.Close(); err != nil {
		w.err = fmt.Errorf("%s: %w", w.name, err)
		return w.err
	}
	if !w.file.InPlace() {
		if err := w.file.Sync(); err != nil {
			w.err = fmt.Errorf("%s: fsync: %w", w.name, err)
			return w.err
		}
	}
	return nil
}

// Close finishes the output: the Parquet file is fsynced and renamed into
// place; the Arrow stream gets its end-of-stream marker and is flushed.
func (w *Writer[T]) Close() error {
	if w.pw != nil {
		if w.err != nil {
			w.file.Abort()
			return w.err
		}
		if w.finished {
			if err := w.file.Commit(); err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
			return nil
		}
		if err := w.pw.Close(); err != nil {
			w.file.Abort()
			return w.fail(err)
		}
		if err := w.file.Commit(); err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		return nil
	}
	w.rb.Release()
	err := w.aw.Close()
	if ferr := w.bw.Flush(); err == nil {
		err = ferr
	}
	if w.sr != nil {
		if cerr := w.sr.close(); err == nil {
			err = cerr
		}
		w.sr = nil
	}
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", w.name, err)
	}
	return w.err
}

// Abort discards a Parquet output (nothing appears at its path; a FIFO or
// device written in place is closed, its reader seeing a cut file). For an
// Arrow stream it closes the stream so that readers see a clean end.
func (w *Writer[T]) Abort() {
	if w.pw != nil {
		w.file.Abort()
		return
	}
	w.Close()
}

// ErrSchema is wrapped by errors about input whose columns do not fit the
// expected row type.
var ErrSchema = errors.New("wrong schema")

// SchemaError is an ErrSchema: the input's columns do not fit the row
// type. Columns are the input's top-level column names, from which a
// caller can tell what kind of file it was given instead.
type SchemaError struct {
	Columns []string
	Err     error
}

func (e *SchemaError) Error() string        { return ErrSchema.Error() + ": " + e.Err.Error() }
func (e *SchemaError) Unwrap() error        { return e.Err }
func (e *SchemaError) Is(target error) bool { return target == ErrSchema }
