package dedup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/textenc"
	"github.com/infohash/infohash/internal/exitcode"
)

// obsIn is the projection of an observation file dedup reads. info_hash is
// read as plain bytes so that files other tools wrote (DuckDB writes
// BLOB) are accepted and every length is checked; parquet-go converts
// timestamp units (DuckDB writes microseconds).
type obsIn struct {
	InfoHash   []byte `parquet:"info_hash"`
	InfoHashV2 []byte `parquet:"info_hash_v2,optional"`
	HashType   int64  `parquet:"hash_type,optional"` // any integer width; typeOf narrows it
	ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	Source     string `parquet:"source,optional"`
}

// obsColumns are the columns dedup reads: only their pages are checked.
var obsColumns = parquet.SchemaOf(obsIn{})

// peerIn is the projection of the announced endpoint columns (peers.go)
// the row reader reads beside obsIn when the run keeps announced peers.
// PeerPort is a pointer, an int64 so that a value of any integer column
// is read by value (a UBIGINT's as its bits): a null port is none, a 0 or
// one past int32 a bad one (badports.go).
type peerIn struct {
	NodeAddr []byte `parquet:"node_addr,optional"`
	PeerPort *int64 `parquet:"peer_port,optional"`
}

// obsPeerColumns are obsColumns and the endpoint columns: the columns
// dedup reads, and checks the pages of, when it keeps announced peers.
var obsPeerColumns = parquet.SchemaOf(struct {
	obsIn
	peerIn
}{})

const readBatch = 8192

// fastPath is false in tests that compare the fast path with the row
// reader.
var fastPath = true

// readInput feeds every observation of in to b. A panic while decoding
// the input (parquet-go and arrow have some on crafted files) fails this
// input as bad input instead of crashing the program.
func readInput(ctx context.Context, in input, now int64, b *batch) (n int64, err error) {
	bad := func(err error) error { return exitcode.BadInput(fmt.Errorf("dedup: %s: %w", in.name, err)) }
	defer func() {
		if err == nil && b.tooManySources {
			err = bad(fmt.Errorf("more than %d distinct source values in one batch: not observations", maxSources))
		}
		if err == nil {
			return
		}
		if in.live != nil && exitcode.Of(err) == exitcode.Usage {
			in.live.Wait(ctx) // bad input is set aside whole: let the rest arrive
		}
		switch {
		case ctx.Err() != nil:
			err = ctx.Err() // interrupted: the input is not at fault
		case in.live != nil && in.live.Err() != nil:
			err = fmt.Errorf("dedup: stdin: %w", in.live.Err()) // nor when stdin broke
		default:
			err = setAsideInput(in, err)
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			err = bad(rowio.PanicError(p, in.kind.format()))
		}
	}()
	switch in.kind {
	case kindText:
		f, err := in.open(ctx)
		if err != nil {
			return 0, bad(err)
		}
		defer f.Close()
		n, err := foldHashList(in.name, f, now, b)
		if err != nil {
			return n, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
		}
		return n, nil
	case kindArrow:
		return readArrow(ctx, in, b, bad)
	}
	return readParquet(ctx, in, b)
}

func readParquet(ctx context.Context, in input, b *batch) (n int64, err error) {
	bad := func(err error) error { return exitcode.BadInput(fmt.Errorf("dedup: %s: %w", in.name, err)) }
	f, err := os.Open(in.path)
	if err != nil {
		return 0, bad(err)
	}
	defer f.Close()
	read := obsColumns
	if !b.noPeers {
		read = obsPeerColumns
	}
	pf, err := openInput(f, in, read)
	if err != nil {
		return 0, bad(err)
	}
	if err := checkObsSchema(pf, !b.noPeers); err != nil {
		return 0, bad(fmt.Errorf("%w: %w", rowio.ErrSchema, err))
	}
	if err := parquetHiveError(in, pf); err != nil {
		return 0, bad(fmt.Errorf("%w: %w", rowio.ErrSchema, err))
	}
	if !b.noPeers {
		defer func() {
			if err == nil {
				if err = b.parquetNoPort(in.name, pf); err != nil {
					err = bad(err)
				}
			}
		}()
	}
	if cols, ok := fastLayout(pf); ok && fastPath {
		if b.noPeers {
			cols.port, cols.addr = nil, nil
		}
		n, err := readFast(ctx, in.name, pf, cols, b)
		if err != nil && !errors.Is(err, context.Canceled) {
			err = bad(err)
		}
		return n, err
	}
	var hashText, v2Text string
	if c := pf.Root().Column("info_hash"); c != nil {
		hashText = rowio.TextType(c.Type())
	}
	if c := pf.Root().Column("info_hash_v2"); c != nil {
		v2Text = rowio.TextType(c.Type())
	}
	// An unsigned hash_type is read by value, as the fast path does:
	// parquet-go hands its bits back as a signed integer.
	typUnsigned, typKind := false, parquet.Int64
	if c := pf.Root().Column("hash_type"); c != nil && rowio.UnsignedInt(c.Type()) {
		typUnsigned, typKind = true, c.Type().Kind()
	}
	// So is an unsigned observed_at (UBIGINT, which only this reader
	// reads): one past 2^63 is refused by value, as the Arrow path
	// refuses a uint64 one, not as the negative time its bits make.
	atCol := pf.Root().Column("observed_at")
	atUnsigned := atCol != nil && rowio.UnsignedInt(atCol.Type())
	r := parquet.NewGenericReader[obsIn](pf)
	defer r.Close()
	buf := make([]obsIn, readBatch)
	peers := rowPeers(pf, b)
	defer peers.close()
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		clear(buf) // a null info_hash_v2 must read as nil, not as a reused row's empty slice
		k, err := r.Read(buf)
		if perr := peers.read(k); perr != nil {
			return n, bad(perr)
		}
		for i := 0; i < k; i++ {
			if typUnsigned {
				buf[i].HashType = unsignedValue(buf[i].HashType, typKind)
			}
			var err error
			if at := buf[i].ObservedAt; atUnsigned && at < 0 {
				err = fmt.Errorf("row %d: %s", n+int64(i)+1, uint64TimeError(uint64(at)))
			}
			if err == nil {
				err = unhexRow(n+int64(i), &buf[i], hashText, v2Text)
			}
			if err == nil {
				err = addRow(n+int64(i), &buf[i], b)
			}
			if err == nil {
				peers.add(i, &buf[i], b)
			}
			if err != nil {
				if nerr := firstNull(pf, n+int64(i)); nerr != nil {
					err = nerr // what made the row bad: a null read as empty or zero
				}
				return n, bad(err)
			}
		}
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, bad(&rowio.CorruptError{Format: "Parquet", Err: err})
		}
	}
}

// firstNull is the error for the first null info_hash or observed_at of
// pf up to row last, or nil. The row reader reads a null as an empty hash
// or a zero time, which addRow refuses without knowing why: only then are
// these columns' levels read again, to say so.
func firstNull(pf *parquet.File, last int64) error {
	var err error
	for _, name := range []string{"info_hash", "observed_at"} {
		c := pf.Root().Column(name)
		if c == nil || c.MaxDefinitionLevel() == 0 || c.MaxRepetitionLevel() > 0 {
			continue
		}
		if row, ok := nullRow(pf, c, last); ok {
			err, last = fmt.Errorf("row %d: %s is null", row+1, name), row
		}
	}
	return err
}

// nullRow finds the first row up to last where leaf column c is null.
func nullRow(pf *parquet.File, c *parquet.Column, last int64) (int64, bool) {
	var first int64
	for _, rg := range pf.RowGroups() {
		if first > last {
			break
		}
		pages := rg.ColumnChunks()[c.Index()].Pages()
		row := first
		for {
			p, err := pages.ReadPage()
			if err != nil {
				break // the row reader read these pages: only the end
			}
			found := int64(-1)
			if p.NumNulls() > 0 {
				for i, d := range p.DefinitionLevels() {
					if int(d) != c.MaxDefinitionLevel() {
						found = row + int64(i)
						break
					}
				}
			}
			row += p.NumRows()
			parquet.Release(p)
			if found >= 0 {
				pages.Close()
				return found, found <= last
			}
		}
		pages.Close()
		first += rg.NumRows()
	}
	return 0, false
}

// unhexRow decodes the hashes of row o (number row of its input) that
// were read from text columns (hashText and v2Text their types, "" for
// bytes): the row readers' way, as textPage is the fast path's.
func unhexRow(row int64, o *obsIn, hashText, v2Text string) error {
	var h [32]byte
	if hashText != "" {
		n, msg := textenc.HashValue(&h, "info_hash", hashText, o.InfoHash, true)
		if n == 0 {
			return &rowError{row: row, msg: msg}
		}
		o.InfoHash = append([]byte(nil), h[:n]...)
	}
	if v2Text != "" && len(o.InfoHashV2) > 0 {
		if _, msg := textenc.V2Value(&h, "info_hash_v2", v2Text, o.InfoHashV2); msg != "" {
			return &rowError{row: row, msg: msg}
		}
		o.InfoHashV2 = append([]byte(nil), h[:]...)
	}
	return nil
}

// addRow checks row o (number row of its input) and folds it into b: the
// row readers' way, where the fast paths read columns.
func addRow(row int64, o *obsIn, b *batch) error {
	var h schema.Hash
	typ := typeOf(o.HashType)
	if msg := textenc.V2BytesError("info_hash_v2", len(o.InfoHashV2)); msg != "" {
		return fmt.Errorf("row %d: %s", row+1, msg) // unhexRow decoded a text one
	}
	if msg := textenc.HashBytesError("info_hash", len(o.InfoHash), true); msg != "" {
		return fmt.Errorf("row %d: %s", row+1, msg) // unhexRow decoded a text one
	}
	switch len(o.InfoHash) {
	case 20:
		if len(o.InfoHashV2) == 32 && !bytes.Equal(o.InfoHashV2[:20], o.InfoHash) {
			return v2NotOfHashError(row, schema.Hash(o.InfoHash), o.InfoHashV2)
		}
	case 32:
		if len(o.InfoHashV2) == 0 {
			o.InfoHashV2 = o.InfoHash
		} else if !bytes.Equal(o.InfoHashV2, o.InfoHash) {
			return v2DiffersError(row, o.InfoHash)
		}
		typ = schema.HashV2
	}
	copy(h[:], o.InfoHash)
	if typ == 0 {
		typ = schema.HashV1
	}
	if err := checkObs(row, typ, o.ObservedAt); err != nil {
		return err
	}
	if o.ObservedAt > b.fut.latest {
		o.ObservedAt = b.fut.over(o.ObservedAt)
	}
	if o.Source == "" {
		o.Source = schema.SourceImport
	}
	if len(o.InfoHashV2) == 0 {
		o.InfoHashV2 = nil // null, whatever parquet-go handed back
	}
	if err := b.add(h, o.InfoHashV2, typ, o.ObservedAt, o.Source); err != nil {
		return fmt.Errorf("row %d: %w", row+1, err)
	}
	return nil
}

// unsignedValue is v, an unsigned hash_type of physical kind k as the row
// reader hands it back (its bits as a signed integer), as the value it
// holds: a UBIGINT past 2^63 as math.MaxInt64, out of range all the same,
// as the Arrow path reads a uint64 one.
func unsignedValue(v int64, k parquet.Kind) int64 {
	if k == parquet.Int32 {
		return int64(uint32(v))
	}
	if v < 0 {
		return math.MaxInt64
	}
	return v
}

// Plausible observation times: 2001-01-01 (BitTorrent) to 2200-01-01,
// both included.
const minTime, maxTime = 978307200000, 7258118400000

// plausibleRange is minTime..maxTime as dates, for errors.
var plausibleRange = time.UnixMilli(minTime).UTC().Format(time.DateOnly) + ".." + time.UnixMilli(maxTime).UTC().Format(time.DateOnly)

// implausibleTime is checkObs's error for an observed_at of at ms (not in
// minTime..maxTime) in row: the time as a date too, and the range.
func implausibleTime(row, at int64) error {
	when := time.UnixMilli(at).UTC()
	shown := when.Format("2006-01-02T15:04:05.999Z07:00")
	if y := when.Year(); y < 0 || y > 9999 {
		shown = fmt.Sprintf("year %d", y) // RFC 3339 has 4-digit years
	}
	return fmt.Errorf("row %d: observed_at %d ms (%s) is outside %s", row+1, at, shown, plausibleRange)
}

// badType stands for a hash_type beyond int8 (see typeOf).
const badType int8 = -128

// hashTypeRangeError is the error for the hash_type of row beyond int8
// (badType), whichever reader found it.
func hashTypeRangeError(row int64) error {
	return fmt.Errorf("row %d: hash_type out of range, want 1 or 2", row+1)
}

func checkObs(row int64, typ int8, at int64) error {
	if typ == badType {
		return hashTypeRangeError(row)
	}
	if typ != schema.HashV1 && typ != schema.HashV2 {
		return fmt.Errorf("row %d: hash_type %d, want 1 or 2", row+1, typ)
	}
	if at < minTime || at > maxTime {
		return implausibleTime(row, at)
	}
	return nil
}
