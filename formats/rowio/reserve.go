package rowio

import (
	"errors"
	"reflect"

	"github.com/infohash/infohash/formats/fsutil"
)

// Reservation bounds (variables for tests). A ParquetWriter that reserves
// keeps the space of its file allocated up to what finishing it would
// take now (the row group in memory, the page index, the footer) plus
// reserveSlack, which covers what the rows written between two checks can
// add: a check comes every 64 rows, or before each row with blob values
// (of which at most blobCheckBytes go unchecked). When it must reserve,
// it takes reserveAhead more, so that fallocate(2) runs about once per
// 4 MiB written: small against a row group (64 MiB at most), so that a
// nearly full disk stops a run late, not at its start, and cheap (one
// system call per 4 MiB).
var (
	reserveSlack int64 = 1 << 20
	reserveAhead int64 = 4 << 20
)

// tailBytes bounds the page index and footer of a file, beyond the
// pageIndexShare of its data, with chunkTailBytes per column chunk of
// each row group ended by Flush (many small row groups: a slow capture's).
const (
	tailBytes      = 256 << 10
	chunkTailBytes = 1 << 10
	pageIndexShare = 32
)

// ErrOutputFull is wrapped by the error of a Write that stopped because
// the disk (or quota, or file size limit) has no room for more rows: the
// rows written before it, and those of the failing call it reports as
// written, have their space reserved, and Close completes the file.
var ErrOutputFull = errors.New("no room left for more rows")

// FullError is an ErrOutputFull: Err is the reservation's (ENOSPC,
// EDQUOT, EFBIG). Taken, in one that Writer.Write returned, is how many
// of that call's rows were taken (the rest were refused).
type FullError struct {
	Name  string
	Err   error
	Taken int
}

func (e *FullError) Error() string {
	return ErrOutputFull.Error() + ": " + e.Err.Error() // Err names the file
}
func (e *FullError) Unwrap() []error { return []error{ErrOutputFull, e.Err} }

// reserver is what a ParquetWriter reserves its space through.
type reserver interface {
	Reserve(total int64) error
}

// needed bounds the bytes that finishing the file would write in all:
// parquet-go's Size (what was written, plus the row group in memory,
// its values counted uncompressed), a share of it for the page index,
// and the footer's bound.
func (p *ParquetWriter[T]) needed() int64 {
	s := p.pw.Size()
	return s + s/pageIndexShare + tailBytes + int64(p.groups*p.cols)*chunkTailBytes
}

// ensure reserves room for the file as of the last check (p.need) plus
// extra bytes about to be written, and reserveSlack. fits reports
// whether p.need+extra is within the space reserved; err is a
// *FullError once the disk cannot give the slack (the run should stop),
// or another error of the reservation.
func (p *ParquetWriter[T]) ensure(extra int64) (fits bool, err error) {
	want := p.need + extra + reserveSlack
	if want <= p.reserved {
		return true, nil
	}
	err = p.res.Reserve(want + reserveAhead)
	if err == nil {
		p.reserved = want + reserveAhead
		return true, nil
	}
	if !fsutil.IsNoSpace(err) {
		return false, err
	}
	// No room ahead: the slack will do, until it cannot be had either;
	// then at least what is needed, if it is not reserved already.
	if p.res.Reserve(want) == nil {
		p.reserved = want
		return true, nil
	}
	if need := p.need + extra; need > p.reserved && p.res.Reserve(need) == nil {
		p.reserved = need
	}
	return p.need+extra <= p.reserved, &FullError{Name: p.name, Err: err}
}

// startReserving makes p reserve its file's space through r from now on,
// taking the first reservation (a full disk fails it: nothing written).
func (p *ParquetWriter[T]) startReserving(name string, r reserver) error {
	p.res, p.name = r, name
	p.cols = len(p.pw.Schema().Columns())
	p.need = p.needed()
	if _, err := p.ensure(0); err != nil {
		return err
	}
	return nil
}

// tightMargin is the room a ParquetWriter whose reservations have ended
// keeps free in what it reserved, checked before each row: enough for
// any row without blob values (whose bytes are checked as well).
var tightMargin int64 = 64 << 10

// writeTight is Write once a reservation has failed (p.full): rows are
// taken one at a time while what they need stays within the space
// reserved (a fetch writes the released rows of the jobs its stop left),
// and refused with p.full from the first that might not fit.
func (p *ParquetWriter[T]) writeTight(rows []T, sizer blobSizer) (int, error) {
	for i := range rows {
		extra := int64(0)
		if len(sizer) > 0 {
			extra = int64(sizer.size(reflect.ValueOf(&rows[i]).Elem()))
		}
		if p.needed()+extra+extra/pageIndexShare+tightMargin > p.reserved {
			return i, p.full
		}
		if n, err := p.writeBatch(rows[i : i+1]); err != nil {
			return i + n, err
		}
	}
	return len(rows), nil
}
