package rowio

import (
	"fmt"
	"iter"
	"reflect"
)

// seqChunk is how many rows WriteSeq hands the Parquet writer at a time.
// A multiple of 64: ParquetWriter.Write checks the row group's size every
// 64 rows of a call, so that chunks of whole 64s end the row groups where
// one call with every row would.
const seqChunk = 64 * 64

// WriteSeq appends the rows of seq as one Write of them all would, byte
// for byte (one Arrow record batch; Parquet row groups ended at the same
// rows), without the caller holding them all: a Parquet output takes
// them a chunk at a time, an Arrow one into its builders as they come.
func (w *Writer[T]) WriteSeq(seq iter.Seq[T]) error {
	if w.err != nil {
		return w.err
	}
	if w.finished {
		return fmt.Errorf("%s: rows written after Finish", w.name)
	}
	var n int64
	if w.pw == nil {
		fbs := w.rb.Fields()
		for r := range seq {
			w.pl.appendRow(fbs, reflect.ValueOf(&r).Elem())
			n++
		}
		if n == 0 {
			return nil
		}
		w.n += n
		return w.writeRecord()
	}
	chunk := make([]T, 0, seqChunk)
	put := func() error {
		if _, err := w.pw.Write(chunk); err != nil {
			return w.fail(err)
		}
		w.n += int64(len(chunk))
		clear(chunk)
		chunk = chunk[:0]
		return nil
	}
	for r := range seq {
		n++
		if chunk = append(chunk, r); len(chunk) == seqChunk {
			if err := put(); err != nil {
				return err
			}
		}
	}
	if n == 0 {
		return nil
	}
	if err := put(); err != nil {
		return err
	}
	return w.flushDue()
}
