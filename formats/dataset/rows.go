package dataset

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/internal/exitcode"
)

// WriteStaged writes rows (already sorted as the table requires) as a new
// Parquet data file of partition key of table in tx, and stages it.
func WriteStaged[T any](tx *Tx, table, key string, rows []T) (FileInfo, error) {
	return WriteStagedAs(tx, table, key, NewName(".parquet"), rows)
}

// WriteStagedAs is WriteStaged with a file name of the caller's (unique,
// ending in .parquet).
func WriteStagedAs[T any](tx *Tx, table, key, name string, rows []T) (FileInfo, error) {
	return WriteStagedWith(tx, table, key, name, int64(len(rows)), func(w io.Writer) error {
		if st, ok := any(rows).([]schema.State); ok {
			// State, the table every stage rewrites, has a column writer
			// of its own (same schema, several times faster).
			return statecol.WriteState(w, st)
		}
		var opts []parquet.WriterOption
		if table == TableState {
			// Snappy rather than zstd: state files are rewritten often and
			// read back by infohash itself, where speed matters more than
			// size. Torrents (info dictionaries) keep zstd.
			opts = append(opts, parquet.Compression(rowio.FastSnappy{}))
		}
		pw := rowio.NewParquetWriter[T](w, opts...)
		if _, err := pw.Write(rows); err != nil {
			return err
		}
		return pw.Close()
	})
}

// WriteStagedWith stages file name of partition key of table, of rows
// rows, written by write (buffered, and checksummed on the way; a
// .parquet data file's footer is then summed from its tail). Under
// FinishInBackground the file may still be being written when it
// returns; an error of those writes is WaitStaged's.
func WriteStagedWith(tx *Tx, table, key, name string, rows int64, write func(io.Writer) error) (FileInfo, error) {
	return WriteStagedWrap(tx, table, key, name, rows, write, nil)
}

// WriteStagedWrap is WriteStagedWith for a caller that wraps its error:
// wrap (nil: none) wraps as the caller would the error of a file finished
// in the background, which WaitStaged returns.
func WriteStagedWrap(tx *Tx, table, key, name string, rows int64, write func(io.Writer) error,
	wrap func(error) error) (FileInfo, error) {
	p, err := tx.StagePath(table, key, name)
	if err != nil {
		return FileInfo{}, err
	}
	// Around the page cache: a staged file is written once, synced at the
	// commit, and read back, if at all, by a later run (fsutil.Uncached).
	crc := crc32.New(castagnoli)
	f, err := fsutil.CreateUncached(p, crc)
	if err != nil {
		return FileInfo{}, fmt.Errorf("dataset: %w", err)
	}
	if err := write(f); err != nil {
		f.Abort()
		return FileInfo{}, stageError(p, err)
	}
	info := FileInfo{Name: name, Rows: rows, Size: f.Size()}
	// A data file's footer is summed from the writer's buffers, where its
	// last bytes still are (from the file once written, if not).
	footer, inMemory := rowio.FooterSum{}, false
	if strings.HasSuffix(name, ".parquet") {
		tr := &tailReader{f: f}
		s, err := rowio.SumFooter(tr, info.Size)
		if err != nil && !tr.missed {
			f.Abort()
			return FileInfo{}, fmt.Errorf("dataset: %s: %w", p, err)
		}
		footer, inMemory = s, !tr.missed
	}
	if (inMemory || !strings.HasSuffix(name, ".parquet")) && tx.finishLater(f, func(err error) error {
		if err = stageError(p, err); wrap != nil {
			err = wrap(err)
		}
		return err
	}) {
		info.CRC32C = crc.Sum32() // complete: CloseLater summed the tail
		info.setFooter(footer)
		tx.markStaged(table, key, name)
		return info, nil
	}
	if err := f.Close(); err != nil {
		return FileInfo{}, stageError(p, err)
	}
	info.CRC32C = crc.Sum32()
	if inMemory {
		info.setFooter(footer)
	} else if err := info.sumFooter(p); err != nil {
		return FileInfo{}, fmt.Errorf("dataset: %w", err)
	}
	tx.markStaged(table, key, name)
	return info, nil
}

// sumFooter records in f the FooterSum of f's file at p, if f is a data
// file (a .parquet, not a Bloom filter): read from the tail of the file
// (of f.Size bytes), which its writer has just closed. Its errors name p.
func (f *FileInfo) sumFooter(p string) error {
	if !strings.HasSuffix(f.Name, ".parquet") {
		return nil
	}
	fh, err := os.Open(p)
	if err != nil {
		return err // it names p
	}
	defer fh.Close()
	s, err := rowio.SumFooter(fh, f.Size)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	f.setFooter(s)
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// stageError names the staged file p in err, unless err already does (a
// failed write to it: "write p: no space left on device") or is about a
// source read (SourceError, a source's FooterError).
func stageError(p string, err error) error {
	if se := (*SourceError)(nil); errors.As(err, &se) {
		return err // about what was read, not the staged file
	}
	if _, ok := errors.AsType[*rowio.FooterError](err); ok {
		return err // a damaged source, which it names
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == p {
		return fmt.Errorf("dataset: %w", err)
	}
	return fmt.Errorf("dataset: %s: %w", p, err)
}

// SourceError is what a WriteStagedWith write function returns when
// reading its source failed rather than writing the staged file: the
// error names the source (Path), and WriteStagedWith passes it on without
// naming the staged file, which is no part of the problem.
type SourceError struct {
	Path string
	Err  error
}

func (e *SourceError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// ReadFile reads every row of the Parquet file at path, which must have
// every column of T as T's writer makes it (rowio.CheckTable): a column
// missing from it is damage, not zero values. The file is no snapshot's
// (rowio.UnrecordedFile): it checks no footer checksum. A file of a
// snapshot is read with ReadDataFile (or ReadPartition), which does.
func ReadFile[T any](path string) ([]T, error) { return readFile[T](rowio.UnrecordedFile(path)) }

// ReadDataFile reads every row of data file f of partition key of table
// t of the dataset, as ReadFile does, once the file's footer matches the
// checksum the manifest records of it (FileInfo.Footer: a mismatch is a
// *rowio.FooterError naming the file). The torrents, peers, leases and
// ledger tables have had the same columns in every format; state files
// of an older format, which lack some, are read with statecol and
// Dataset.DataFile.
func ReadDataFile[T any](d *Dataset, t *Table, key string, f FileInfo) ([]T, error) {
	return readFile[T](d.dataFile(t, key, f))
}

// readFile reads every row of df, which must have every column of T
// whatever df.Lacks says (see ReadDataFile), once its footer matches
// df.Footer; on error it returns no row.
func readFile[T any](df rowio.DataFile) (out []T, err error) {
	return ReadFileWithin[T](df, rowio.DefaultLimits())
}

// ReadFileWithin is readFile within lim (merge --from reads the other
// dataset's peers with its string values bounded: lim.MaxValueBytes);
// a WholeChecked df is also checked whole once read.
func ReadFileWithin[T any](df rowio.DataFile, lim rowio.Limits) (out []T, err error) {
	err = eachBatch(df, lim, func(pf *parquet.File) { out = make([]T, 0, pf.NumRows()) }, func(rows []T) error {
		out = append(out, rows...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachBatch hands each batch of rows of df (up to 4096, in the order of
// the file) to each, which must not keep the slice, as readFile reads
// them; opened is called with the file before the first batch.
func eachBatch[T any](df rowio.DataFile, lim rowio.Limits, opened func(*parquet.File), each func([]T) error) error {
	f, r, sum, size, err := df.OpenSummed() // checks the footer before anything reads it
	if err != nil {
		return err // it names the file
	}
	defer f.Close()
	whole := df.ChecksWhole() // a writer's: the whole file is checked once read
	if whole {
		sum.Start()
	}
	// The file is opened through rowio's checks: it may be another
	// dataset's (merge --from), and a damaged footer must be an error,
	// not gigabytes allocated or a crash inside parquet-go.
	pf, err := rowio.OpenParquet(r, size, parquet.SchemaOf(new(T)), lim)
	if err != nil {
		return fmt.Errorf("%s: %w", df.Path(), err)
	}
	if opened != nil {
		opened(pf)
	}
	if err := parquetBatches(pf, df.Path(), each); err != nil || !whole {
		return err
	}
	return sum.Check() // a *rowio.FooterError naming the file
}

// readParquet reads every row of pf (named path in errors), as
// parquetBatches checks and reads them; on error it returns no row.
func readParquet[T any](pf *parquet.File, path string) ([]T, error) {
	out := make([]T, 0, pf.NumRows())
	err := parquetBatches(pf, path, func(rows []T) error {
		out = append(out, rows...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parquetBatches hands each batch of rows of pf (named path in errors)
// to each, once it has checked that pf has T's columns. parquet-go
// panics on some damaged pages that rowio's checks let through: that is
// an error naming the file (rowio.PanicError), not a crash of the
// command reading it.
func parquetBatches[T any](pf *parquet.File, path string, each func([]T) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %w", path, rowio.PanicError(p, "Parquet"))
		}
	}()
	if err := rowio.CheckTable(pf, parquet.SchemaOf(new(T)), "Parquet"); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rr := parquet.NewGenericReader[T](pf)
	defer rr.Close()
	rows := rowio.NewParquetRows(rr)
	// Another tool's file (merge --from) may hold wider or unsigned
	// integers than T's fields: they are read by value, and one past its
	// field is bad input, not its bits or low byte (no cost on our own).
	ints := rowio.NewIntCheck[T](pf)
	defer ints.Close()
	buf := make([]T, min(4096, max(pf.NumRows(), 1)))
	for {
		// rows.Read clears buf: a null optional []byte must read as nil,
		// not as the empty leftover of a reused row.
		n, err := rows.Read(buf)
		if good, ierr := ints.Check(buf[:n]); ierr != nil {
			n, err = good, exitcode.BadInput(ierr) // named below
		}
		rowio.NormalizeNulls(buf[:n])
		if n > 0 {
			if err := each(buf[:n]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// EachPartitionBatch hands the rows of partition key of table t to each
// a batch at a time (each file read as ReadDataFile reads it, in the
// order of the manifest), for a reader that keeps less than the rows:
// each must not keep the slice it is given.
func EachPartitionBatch[T any](d *Dataset, t *Table, key string, each func([]T) error) error {
	for _, f := range t.Partitions[key] {
		if err := eachBatch(d.dataFile(t, key, f), rowio.DefaultLimits(), nil, each); err != nil {
			return err
		}
	}
	return nil
}

// EachSourcePartitionBatch is EachPartitionBatch for a writer that
// takes the rows into a new file: each file is checked whole against the
// size and CRC-32C the manifest records once read (SourceFile), and a
// mismatch is a *rowio.FooterError naming it.
func EachSourcePartitionBatch[T any](d *Dataset, t *Table, key string, each func([]T) error) error {
	for _, f := range t.Partitions[key] {
		if err := eachBatch(d.dataFile(t, key, f).WholeChecked(), rowio.DefaultLimits(), nil, each); err != nil {
			return err
		}
	}
	return nil
}

// ReadSourcePartition is ReadPartition for a writer that takes the rows
// into a new file (EachSourcePartitionBatch).
func ReadSourcePartition[T any](d *Dataset, t *Table, key string) ([]T, error) {
	var out []T
	err := EachSourcePartitionBatch(d, t, key, func(rows []T) error {
		out = append(out, rows...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadPartition reads all rows of partition key of table t (each file
// with ReadDataFile).
func ReadPartition[T any](d *Dataset, t *Table, key string) ([]T, error) {
	var out []T
	for _, f := range t.Partitions[key] {
		rows, err := ReadDataFile[T](d, t, key, f)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = rows
		} else {
			out = append(out, rows...)
		}
	}
	return out, nil
}
