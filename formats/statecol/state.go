package statecol

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// ReadState reads every row of the state file df, one row group at a
// time: fn receives each row group's rows (a buffer reused between
// calls). Columns that df lacks (see Open) read as zero values; its footer
// is checked first (see Open).
func ReadState(df rowio.DataFile, fn func([]schema.State) error) (err error) {
	f, err := Open(df)
	if err != nil {
		return err
	}
	path := df.Path()
	defer f.Close()
	defer recoverCorrupt(&err, path)
	var buf []schema.State
	var first int64
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		if cap(buf) < n {
			buf = make([]schema.State, n)
		}
		buf = buf[:n]
		clear(buf)
		if err := f.readState(rg, first, buf); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := fn(buf); err != nil {
			return err
		}
		first += int64(n)
	}
	return nil
}

// ReadStateFile returns all rows of the state file df, decoded straight
// into one slice of the file's size. The columns df lacks read as zero
// values; its footer is checked first (see Open).
func ReadStateFile(df rowio.DataFile) ([]schema.State, error) {
	return ReadStateFileInto(df, nil)
}

// ReadStateFileInto is ReadStateFile decoding into buf's memory when it is
// large enough: a caller that reads partition after partition reuses one
// buffer instead of faulting in fresh pages for each (on this VM a page
// fault cost more than decoding the page's rows).
func ReadStateFileInto(df rowio.DataFile, buf []schema.State) ([]schema.State, error) {
	f, err := Open(df)
	if err != nil {
		return nil, err
	}
	return f.readAll(df.Path(), buf)
}

// ReadUntrustedStateFile is ReadStateFile for a file from elsewhere (see
// OpenUntrusted).
func ReadUntrustedStateFile(df rowio.DataFile) ([]schema.State, error) {
	return ReadUntrustedStateFileWithin(df, rowio.DefaultLimits())
}

// ReadUntrustedStateFileWithin is ReadUntrustedStateFile within lim (see
// OpenUntrustedWithin).
//
// Its integers are read by value (rowio.Int32Past as the columns are
// decoded, then rowio.IntCheck): another tool's UINTEGER attempts or
// hash_type of 2^32-1, or UBIGINT seen_count of 2^63, is bad input naming
// the file, not the -1 or the negative count of its bits.
func ReadUntrustedStateFileWithin(df rowio.DataFile, lim rowio.Limits) ([]schema.State, error) {
	f, err := OpenUntrustedWithin(df, lim)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := f.ReadAllInto(df.Path(), nil)
	if _, ok := errors.AsType[*rowio.IntRangeError](err); ok { // decoding refused a narrow value
		return nil, exitcode.BadInput(err)
	}
	if err != nil {
		return nil, err
	}
	ints := rowio.NewIntCheck[schema.State](f.pf) // reads the narrow columns again, only if any may overflow
	defer ints.Close()
	if _, err := ints.Check(rows); err != nil {
		return nil, exitcode.BadInput(fmt.Errorf("%s: %w", df.Path(), err))
	}
	return rows, nil
}

// readAll reads every row of f (at path), into buf's memory if it is
// large enough, and closes f.
func (f *File) readAll(path string, buf []schema.State) ([]schema.State, error) {
	defer f.Close()
	return f.ReadAllInto(path, buf)
}

// ReadAllInto reads every row of f (opened from path) into buf's memory
// when it is large enough, as ReadStateFileInto does, but leaves f open:
// a caller that opened the file to search its hashes decodes its rows
// without reading and checking its footer again.
//
// A WholeChecked file's bytes are summed as they are read, and the whole
// file is checked against its manifest's record once its rows are in
// (rowio.FileSummer.Check: a *rowio.FooterError naming the file).
func (f *File) ReadAllInto(path string, buf []schema.State) (_ []schema.State, err error) {
	defer recoverCorrupt(&err, path)
	if f.whole {
		f.sum.Start()
	}
	var out []schema.State
	if n := int(f.NumRows()); cap(buf) >= n {
		out = buf[:n]
		clear(out)
	} else {
		out = make([]schema.State, n)
	}
	at := 0
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		if at+n > len(out) {
			return nil, fmt.Errorf("%s: row groups hold more rows than the file", path)
		}
		if err := f.readState(rg, int64(at), out[at:at+n]); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		at += n
	}
	if at != len(out) {
		return nil, fmt.Errorf("%s: %w", path, &rowio.CorruptError{Format: stateFormat,
			Err: fmt.Errorf("row groups hold %d rows, the footer %d", at, len(out))})
	}
	if f.whole {
		if err := f.sum.Check(); err != nil {
			return nil, err // it names the file
		}
	}
	return out, nil
}

// readState reads every column of row group rg, whose first row is the
// file's row first, into st.
func (f *File) readState(rg parquet.RowGroup, first int64, st []schema.State) error {
	o := allRows(st)
	o.first = first
	return f.readColumns(rg, o, AllColumns)
}

// readColumns decodes the columns in need of row group rg into o, and
// checks the values of those that hold one of a few (checkValues).
func (f *File) readColumns(rg parquet.RowGroup, o *rowsOut, need Columns) error {
	read, err := f.decodeColumns(rg, o, need)
	if err != nil {
		return err
	}
	return checkRead(o, read)
}

// decodeColumns decodes the columns in need of row group rg into o, and
// returns those it read (not those in need the file lacks).
func (f *File) decodeColumns(rg parquet.RowGroup, o *rowsOut, need Columns) (read Columns, _ error) {
	n, st := o.n, o.st
	col := func(name ...string) parquet.ColumnChunk {
		c, _ := f.Column(rg, name...)
		return c
	}
	if need&(1<<cInfoHash) != 0 {
		hashes := make([]byte, 20*n)
		c := col("info_hash")
		if c == nil {
			return 0, fmt.Errorf("no info_hash column")
		}
		if err := Fixed(c, 20, hashes); err != nil {
			return 0, fmt.Errorf("info_hash: %w", err)
		}
		if o.sel == nil {
			for r := range st {
				copy(st[r].InfoHash[:], hashes[20*r:])
			}
		}
		for i, r := range o.sel {
			copy(st[i].InfoHash[:], hashes[20*int(r):])
		}
		read |= 1 << cInfoHash
	}
	var z schema.State
	i64 := func(off uintptr) func(parquet.ColumnChunk) error {
		return func(c parquet.ColumnChunk) error { return readInt64Field(c, o, off) }
	}
	i32 := func(name string, off uintptr) func(parquet.ColumnChunk) error {
		return func(c parquet.ColumnChunk) error { return readInt32Field(c, o, off, name, false) }
	}
	str := func(off uintptr) func(parquet.ColumnChunk) error {
		return func(c parquet.ColumnChunk) error { return readStringField(c, o, off) }
	}
	for _, r := range []struct {
		col  int
		read func(parquet.ColumnChunk) error
	}{
		{cInfoHashV2, func(c parquet.ColumnChunk) error { return readBytesField(c, o, unsafe.Offsetof(z.InfoHashV2)) }},
		{cHashType, func(c parquet.ColumnChunk) error {
			return readInt32Field(c, o, unsafe.Offsetof(z.HashType), "hash_type", true)
		}},
		{cFirstSeen, i64(unsafe.Offsetof(z.FirstSeen))},
		{cLastSeen, i64(unsafe.Offsetof(z.LastSeen))},
		{cSeenCount, i64(unsafe.Offsetof(z.SeenCount))},
		{cLastSource, str(unsafe.Offsetof(z.LastSource))},
		{cActivity, func(c parquet.ColumnChunk) error { return readDoubleField(c, o, unsafe.Offsetof(z.Activity)) }},
		{cMetadataStatus, str(unsafe.Offsetof(z.MetadataStatus))},
		{cAttempts, i32("attempts", unsafe.Offsetof(z.Attempts))},
		{cLastAttempt, i64(unsafe.Offsetof(z.LastAttempt))},
		{cLastFailure, str(unsafe.Offsetof(z.LastFailure))},
		{cNextRetry, i64(unsafe.Offsetof(z.NextRetry))},
		{cLeaseID, str(unsafe.Offsetof(z.LeaseID))},
		{cLeaseUntil, i64(unsafe.Offsetof(z.LeaseUntil))},
		{cTier, str(unsafe.Offsetof(z.Tier))},
		{cBackoffStep, i32("backoff_step", unsafe.Offsetof(z.BackoffStep))},
		{cBadMetadata, i32("bad_metadata", unsafe.Offsetof(z.BadMetadata))},
		{cReactivated, i64(unsafe.Offsetof(z.Reactivated))},
		{cFirstSource, str(unsafe.Offsetof(z.FirstSource))},
		{cLastFailureAt, i64(unsafe.Offsetof(z.LastFailureAt))},
		{cPeersAt, i64(unsafe.Offsetof(z.PeersAt))},
		{cInfoHashV2Source, str(unsafe.Offsetof(z.InfoHashV2Source))},
	} {
		if need&(1<<r.col) == 0 {
			continue
		}
		name := stateColumnNames[r.col]
		c := col(name)
		if c == nil {
			continue
		}
		if err := r.read(c); err != nil {
			if _, ok := errors.AsType[*rowio.IntRangeError](err); ok {
				return 0, err // it names the column and the row
			}
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		read |= 1 << r.col
	}
	lists := need & (1<<cAvoidPeers | 1<<cPeers)
	if lists == 0 {
		return read, nil
	}
	for i := range st {
		if lists&(1<<cAvoidPeers) != 0 {
			st[i].AvoidPeers = nil // the reader appends
		}
		if lists&(1<<cPeers) != 0 {
			st[i].Peers = nil
		}
	}
	dst := func(r int) int { return r }
	if o.sel != nil {
		inv := make([]int32, n) // row -> 1 + index in st
		for i, r := range o.sel {
			inv[r] = int32(i + 1)
		}
		dst = func(r int) int { return int(inv[r]) - 1 }
	}
	for _, l := range []struct {
		col   int
		field func(*schema.State) *[]string
	}{
		{cAvoidPeers, func(s *schema.State) *[]string { return &s.AvoidPeers }},
		{cPeers, func(s *schema.State) *[]string { return &s.Peers }},
	} {
		if lists&(1<<l.col) == 0 {
			continue
		}
		name := stateColumnNames[l.col]
		c, maxDef := f.Column(rg, name, "list", "element")
		if c == nil {
			continue
		}
		if err := StringLists(c, n, maxDef, func(r int, s string) {
			if i := dst(r); i >= 0 {
				p := l.field(&st[i])
				*p = append(*p, s)
			}
		}); err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		read |= 1 << l.col
	}
	return read, nil
}

// MergeSorted merges b into a, both sorted by info_hash, in place at the
// end of a (grown if needed), and returns the merged rows: linear, each
// row moved at most once, where sorting the concatenation moved 250-byte
// rows n log n times.
func MergeSorted(a, b []schema.State) []schema.State {
	la, lb := len(a), len(b)
	if lb == 0 {
		return a
	}
	a = slices.Grow(a, lb)[:la+lb]
	i, j := la-1, lb-1
	for k := la + lb - 1; j >= 0; k-- {
		if i >= 0 && bytes.Compare(a[i].InfoHash[:], b[j].InfoHash[:]) > 0 {
			a[k] = a[i]
			i--
		} else {
			a[k] = b[j]
			j--
		}
	}
	return a
}
