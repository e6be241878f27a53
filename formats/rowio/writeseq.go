package rowio

import (
	"fmt"
	"iter"

	"github.com/infohash/infohash/internal/fieldaddr"
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
		// Into the builders a chunk at a time, a column at a time (as
		// Write appends): the record batch is the same. The chunk grows
		// as rows come (a few rows take a small one).
		var chunk []T
		put := func() {
			appendRows(w.app, fieldaddr.OfSlice(chunk), len(chunk))
			n += int64(len(chunk))
			clear(chunk)
			chunk = chunk[:0]
		}
		for r := range seq {
			if chunk = append(chunk, r); len(chunk) == seqChunk {
				put()
			}
		}
		put()
		if n == 0 {
			return nil
		}
		w.n += n
		return w.writeRecord()
	}
	n, err := w.pw.WriteSeq(seq)
	w.n += n
	if err != nil {
		return w.fail(err)
	}
	if n == 0 {
		return nil
	}
	return w.flushDue()
}

// WriteSeq appends the rows of seq as one Write of them all would, byte
// for byte (a chunk of seqChunk rows at a time: row groups end at the
// same rows), without the caller holding them all, and returns how many
// rows it wrote.
func (p *ParquetWriter[T]) WriteSeq(seq iter.Seq[T]) (int64, error) {
	chunk := make([]T, 0, seqChunk)
	var n int64
	put := func() error {
		if _, err := p.Write(chunk); err != nil {
			return err
		}
		n += int64(len(chunk))
		clear(chunk)
		chunk = chunk[:0]
		return nil
	}
	for r := range seq {
		if chunk = append(chunk, r); len(chunk) == seqChunk {
			if err := put(); err != nil {
				return n, err
			}
		}
	}
	if len(chunk) > 0 {
		if err := put(); err != nil {
			return n, err
		}
	}
	return n, nil
}
