package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/textenc"
	"github.com/infohash/infohash/internal/exitcode"
)

// Arrow IPC streams (stdin: what capture writes) are read column by
// column too: each record batch's columns are copied into a slice of
// rows as the Parquet fast path does, then grouped by partition and
// folded. Filling a struct per row by reflection, then folding it, took
// 9-10 s for 10M observations (the Parquet fast path: ~1 s).

// arrowLayout is where an Arrow stream's columns are, by type.
// arrowLayoutOf's error says why the column reader does not take a
// layout: a column of a type neither reader takes (arrowTypeError), or
// one the row reader reports (a column missing, two names but for case).
type arrowLayout struct {
	hash, at, typ, src, v2 int   // column indexes, -1 when absent
	port, addr             int   // peer_port (an integer) and node_addr (text), both or neither (arrowports.go)
	atMul, atDiv           int64 // observed_at in ms: v*atMul/atDiv
	// The types of info_hash and info_hash_v2 when they hold text (hex,
	// see texthash.go), else "".
	hashText, v2Text string
}

// readArrow feeds every observation of the Arrow IPC stream in to b. The
// stream is opened without binding its columns to obsIn's, as the row
// reader does: the column reader checks the layout itself (arrowLayoutOf).
// Both read hashes held as text as hex.
//
// A stream dedup spooled (stdin, a pipe, a leftover spool) must end with
// its end-of-stream marker: one that ends between two messages without
// it is taken for one whose writer was killed there (a rowio.CutError
// with NoEnd), and its batches are kept apart as a cut stream's are
// (setAsideInput). A file named as INPUT is read as it is: one cut
// mid-message after whole batches (its writer killed while writing one)
// gives those batches, and the run notes the cut (batch.cutFile); so
// does one cut inside its first batch (its schema whole), which gives
// none: what a capture killed while writing its first batch leaves. One
// cut inside its schema is bad input: nothing tells what it holds.
func readArrow(ctx context.Context, in input, b *batch, bad func(error) error) (int64, error) {
	n, err := readArrowStream(ctx, in, b, bad)
	if cut, ok := rowio.AsCut(err); ok && !in.inbox && !cut.NoEnd && cut.Schema && cut.Rows == n {
		b.cutFile(in, cut)
		err = nil
	}
	if err == nil && !b.noPeers {
		if err = b.arrowNoPort(ctx, in); err != nil {
			err = bad(err)
		}
	}
	return n, err
}

// readArrowStream is readArrow without the cut file's note.
func readArrowStream(ctx context.Context, in input, b *batch, bad func(error) error) (int64, error) {
	f, err := in.open(ctx)
	if err != nil {
		return 0, bad(err)
	}
	defer f.Close()
	r, err := rowio.OpenArrow[struct{}](in.name, f)
	if err != nil {
		return 0, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
	}
	defer r.Close()
	if in.inbox {
		r.RequireEndMarker()
	} else if err := hiveError(in.path, func(c string) bool { i, _ := rowio.FieldIndex(r.ArrowSchema(), c); return i >= 0 }); err != nil {
		return 0, bad(fmt.Errorf("%w: %w", rowio.ErrSchema, err))
	}
	l, err := arrowLayoutOf(r.ArrowSchema())
	if l.at < 0 {
		var cols []string
		for _, f := range r.ArrowSchema().Fields() {
			cols = append(cols, f.Name)
		}
		if k := schema.KindOfColumns(cols); k != "" {
			// As the Parquet path says it (checkObsSchema).
			return 0, bad(fmt.Errorf("%w: %w", rowio.ErrSchema, missingObservedAt(cols)))
		}
	}
	if b.noPeers {
		l.port, l.addr = -1, -1
	} else if err := arrowPortTypeError(r.ArrowSchema()); err != nil {
		return 0, bad(fmt.Errorf("%w: %w", rowio.ErrSchema, err))
	}
	var typeErr *arrowTypeError
	switch {
	case err == nil && fastPath:
		r.RecycleBuffers() // loadArrow copies what it keeps
		return readArrowColumns(ctx, r, l, b, bad)
	case errors.As(err, &typeErr): // nor does the row reader: said in its words, as Parquet's are
		return 0, bad(fmt.Errorf("%w: %w", rowio.ErrSchema, err))
	}
	f2, err := in.open(ctx) // again, for the row reader
	if err != nil {
		return 0, bad(err)
	}
	defer f2.Close()
	var ports io.Reader // announced peers: their ports are read from the stream once more
	if !b.noPeers && arrowPeerColumns(r.ArrowSchema()) >= 0 {
		f3, err := in.open(ctx)
		if err != nil {
			return 0, bad(err)
		}
		defer f3.Close()
		ports = f3
	}
	return readArrowRows(ctx, in.name, f2, in.inbox, ports, b, bad)
}

// An arrowTypeError is a column of a type dedup does not read, saying
// what it wants (the row reader's error named only the Go field's Arrow
// type, "want timestamp[ms, tz=UTC], got date32", though it reads every
// unit and epoch ms).
type arrowTypeError struct {
	name, want string
	typ        arrow.DataType
}

func (e *arrowTypeError) Error() string {
	return fmt.Sprintf("column %q is %s, want %s", e.name, e.typ, e.want)
}

// uint64TimeError is why an unsigned observed_at v past 2^63 (Arrow's
// uint64, Parquet's UBIGINT) is refused, by every reader: it is no time
// in 2001..2200 (the wrapped-around int64 it would be read as is another
// value).
func uint64TimeError(v uint64) string {
	return fmt.Sprintf("observed_at %d ms is outside %s", v, plausibleRange)
}

func arrowLayoutOf(s *arrow.Schema) (arrowLayout, error) {
	var ambiguous error // two columns a name matches but for case
	col := func(name string) int {
		i, err := rowio.FieldIndex(s, name) // INFO_HASH is info_hash, as DuckDB reads it
		if err != nil && ambiguous == nil {
			ambiguous = err
		}
		return i
	}
	l := arrowLayout{hash: col("info_hash"), at: col("observed_at"), typ: col("hash_type"),
		src: col("source"), v2: col("info_hash_v2"), atMul: 1, atDiv: 1}
	if ambiguous != nil {
		return l, ambiguous
	}
	typeOf := func(i int) arrow.Type {
		if i < 0 {
			return arrow.NULL
		}
		return s.Field(i).Type.ID()
	}
	// not is the reason the column reader does not take column i (name):
	// missing, or of a type no reader takes (an arrowTypeError, saying
	// what it wants).
	not := func(i int, name, want string) error {
		if i < 0 {
			return fmt.Errorf("missing column %q", name)
		}
		return &arrowTypeError{name: name, typ: s.Field(i).Type, want: want}
	}
	binary := rowio.IsArrowBinary
	text := func(i int) string {
		if rowio.IsArrowString(typeOf(i)) {
			return s.Field(i).Type.String()
		}
		return ""
	}
	l.hashText, l.v2Text = text(l.hash), text(l.v2)
	if !binary(typeOf(l.hash)) && l.hashText == "" {
		return l, not(l.hash, "info_hash", "binary (20 bytes, or 32 for v2) or hex text")
	}
	if l.v2 >= 0 && !binary(typeOf(l.v2)) && l.v2Text == "" {
		return l, not(l.v2, "info_hash_v2", "binary (32 bytes) or hex text")
	}
	// Epoch ms as an integer: int64, or uint64 as Parquet's UBIGINT is
	// (by value: one past 2^63 is out of range). A narrower integer holds
	// no time in 2001..2200 as ms: a wrong type, as Parquet's INT32 is.
	switch t := typeOf(l.at); t {
	case arrow.INT64, arrow.UINT64:
	case arrow.TIMESTAMP:
		switch s.Field(l.at).Type.(*arrow.TimestampType).Unit {
		case arrow.Second:
			l.atMul = 1000
		case arrow.Microsecond:
			l.atDiv = 1000
		case arrow.Nanosecond:
			l.atDiv = 1_000_000
		}
	default:
		return l, not(l.at, "observed_at", "a timestamp or a 64-bit integer (epoch ms)")
	}
	switch typeOf(l.typ) {
	case arrow.NULL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.UINT64:
	default:
		return l, not(l.typ, "hash_type", "an integer (1 or 2)")
	}
	// source is text or a BLOB (not fixed_size_binary, as Parquet's
	// FIXED_LEN_BYTE_ARRAY is not), checked as text (sourceError).
	if t := typeOf(l.src); l.src >= 0 && !rowio.IsArrowString(t) && (!binary(t) || t == arrow.FIXED_SIZE_BINARY) {
		return l, not(l.src, "source", "text or a BLOB (binary)")
	}
	if l.port = arrowPeerColumns(s); l.port >= 0 {
		l.addr = col("node_addr")
	} else {
		l.addr = -1
	}
	return l, nil
}

// readArrowColumns feeds every row of r, whose columns are laid out as l
// says, to b; it returns the rows read. bad makes a bad-input error
// naming the input.
func readArrowColumns(ctx context.Context, r *rowio.Reader[struct{}], l arrowLayout, b *batch,
	bad func(error) error) (int64, error) {
	var rows rgBuf
	var out recBuf
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		rec, err := r.Record()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil { // it names the input
			return n, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
		}
		k := int(rec.NumRows())
		if err := rows.loadArrow(rec, l, b); err != nil {
			var re *rowError
			if errors.As(err, &re) {
				return n, bad(fmt.Errorf("row %d: %s", n+re.row+1, re.msg))
			}
			return n, bad(err)
		}
		if err := rows.checkRows(k, n, &b.fut); err != nil {
			return n, bad(err)
		}
		rows.scatter(k, &out)
		b.view(b.srcs, b.announce)
		b.addRows(&out)
		n += int64(k)
	}
}

// loadArrow copies the rows of record batch rec into rows [0, n).
func (r *rgBuf) loadArrow(rec arrow.Record, l arrowLayout, b *batch) error {
	n := int(rec.NumRows())
	imp := r.reset(n, b)
	if err := noNulls(rec.Column(l.hash), "info_hash"); err != nil {
		return err
	}
	if l.hashText != "" {
		strs := rec.Column(l.hash).(interface{ Value(int) string })
		var h [32]byte
		for i := range n {
			k, msg := textenc.HashValue(&h, "info_hash", l.hashText, strs.Value(i), true)
			if k == 0 {
				return &rowError{row: int64(i), msg: msg}
			}
			r.putHash(i, h[:k])
		}
	} else {
		hashes := rec.Column(l.hash).(interface{ Value(int) []byte })
		for i := range n {
			h := hashes.Value(i)
			if msg := textenc.HashBytesError("info_hash", len(h), true); msg != "" {
				return &rowError{row: int64(i), msg: msg}
			}
			r.putHash(i, h)
		}
	}
	at := rec.Column(l.at)
	if err := noNulls(at, "observed_at"); err != nil {
		return err
	}
	switch a := at.(type) {
	case *array.Timestamp:
		if l.atMul != 1 { // seconds: a value past ±2^63/1000 would wrap around
			for i, v := range a.TimestampValues()[:n] {
				if int64(v) > math.MaxInt64/l.atMul || int64(v) < math.MinInt64/l.atMul {
					return &rowError{row: int64(i), msg: fmt.Sprintf("observed_at %d s is outside %s", v, plausibleRange)}
				}
			}
		}
		for i, v := range a.TimestampValues()[:n] {
			r.at[i] = int64(v) * l.atMul / l.atDiv
		}
	case *array.Int64:
		for i, v := range a.Int64Values()[:n] {
			r.at[i] = v * l.atMul / l.atDiv
		}
	case *array.Uint64: // by value: one past 2^63 would wrap around to a negative time
		for i, v := range a.Uint64Values()[:n] {
			if v > math.MaxInt64 {
				return &rowError{row: int64(i), msg: uint64TimeError(v)}
			}
			r.at[i] = int64(v)
		}
	}
	if l.typ >= 0 {
		c := rec.Column(l.typ)
		for i := range n {
			if c.IsNull(i) {
				continue
			}
			switch a := c.(type) {
			case *array.Int8:
				r.typ[i] = a.Value(i)
			case *array.Int16:
				r.typ[i] = typeOf(int64(a.Value(i)))
			case *array.Int32:
				r.typ[i] = typeOf(int64(a.Value(i)))
			case *array.Int64:
				r.typ[i] = typeOf(int64(a.Value(i)))
			case *array.Uint8:
				r.typ[i] = typeOf(int64(a.Value(i)))
			case *array.Uint16:
				r.typ[i] = typeOf(int64(a.Value(i)))
			case *array.Uint32:
				r.typ[i] = typeOf(int64(a.Value(i)))
			case *array.Uint64: // as int64, one past 2^63 would wrap around to a negative one
				r.typ[i] = typeOf(int64(min(a.Value(i), math.MaxInt64)))
			}
		}
	}
	if l.src >= 0 {
		c := rec.Column(l.src)
		strs, _ := c.(interface{ Value(int) string })
		blobs, _ := c.(interface{ Value(int) []byte }) // a BLOB: its bytes, read as text
		var last string
		lastID := imp
		for i := range n {
			if c.IsNull(i) {
				continue
			}
			var s string
			if blobs != nil {
				v := blobs.Value(i)
				s = unsafe.String(unsafe.SliceData(v), len(v))
			} else {
				s = strs.Value(i)
			}
			if s != last {
				last, lastID = s, imp
				if s != "" {
					var err error
					if lastID, err = b.intern(s); err != nil {
						return &rowError{row: int64(i), msg: err.Error()}
					}
				}
			}
			r.src[i] = lastID
		}
	}
	if l.v2 >= 0 && l.v2Text != "" {
		c := rec.Column(l.v2)
		strs := c.(interface{ Value(int) string })
		var h [32]byte
		for i := range n {
			if c.IsNull(i) {
				continue
			}
			switch n, msg := textenc.V2Value(&h, "info_hash_v2", l.v2Text, strs.Value(i)); {
			case msg != "":
				return &rowError{row: int64(i), msg: msg}
			case n == 32: // else empty: null, as in infohash's own files
				r.putV2(i, h[:])
			}
		}
	} else if l.v2 >= 0 {
		c := rec.Column(l.v2)
		vals := c.(interface{ Value(int) []byte })
		for i := range n {
			if c.IsNull(i) {
				continue
			}
			v := vals.Value(i)
			if msg := textenc.V2BytesError("info_hash_v2", len(v)); msg != "" {
				return &rowError{row: int64(i), msg: msg}
			}
			if len(v) == 32 { // else empty: null, as in infohash's own files
				r.putV2(i, v)
			}
		}
	}
	r.typeLongHashes()
	r.loadArrowPeers(rec, l, b)
	return nil
}

// noNulls is a rowError for c's first null.
func noNulls(c arrow.Array, name string) error {
	if c.NullN() == 0 {
		return nil
	}
	for i := range c.Len() {
		if c.IsNull(i) {
			return &rowError{row: int64(i), msg: name + " is null"}
		}
	}
	return nil
}
