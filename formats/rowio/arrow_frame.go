package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// framedReader passes an Arrow IPC stream through, checking each
// message's framing first: the reader makes a buffer of the metadata
// length a message declares before reading it, so a 4-byte lie is a
// gigabyte allocation. Metadata over the limit or a body length that is
// negative or over MaxArrowBuffer fails the read instead.
//
// It also tells a stream cut short from a corrupt one: r ending after
// the first byte of a message and before its last is a CutError (the
// arrow reader takes some such ends, after a message's first 4 or 8
// bytes or before its body, for the end of the stream); r ending where a
// message would begin is the end of the stream, as it is for the arrow
// reader, unless needEnd is set: then r must end with the end-of-stream
// marker, and ending where a message would begin after the schema is a
// CutError with NoEnd set (the arrow reader takes it for the end).
type framedReader struct {
	r       io.Reader
	lim     Limits
	needEnd bool
	pending []byte // prefix and metadata of the current message
	body    int64  // body bytes of the current message still to pass
	err     error
	pos     int64 // bytes read from r
	start   int64 // where the current message began in r
	whole   int   // messages passed whole
	ended   bool  // the end-of-stream marker was passed
	// watch are the columns whose values Limits.MaxValueBytes bounds
	// (arrow_valuelimit.go), bw what is still to check of the current
	// batch's body (bodyLen bytes), rows and batches those passed.
	watch         []watchedColumn
	bw            *batchWatch
	bodyLen, rows int64
	batches       int
}

func (g *framedReader) Read(p []byte) (int, error) {
	for len(g.pending) == 0 && g.body == 0 {
		if g.err != nil {
			return 0, g.err
		}
		if g.err = g.next(); g.err != nil {
			g.pending = nil // a bad message never reaches the reader
		}
	}
	if len(g.pending) > 0 {
		n := copy(p, g.pending)
		g.pending = g.pending[n:]
		if len(g.pending) == 0 && g.body == 0 {
			g.whole++
		}
		return n, nil
	}
	if int64(len(p)) > g.body {
		p = p[:g.body]
	}
	n, err := g.r.Read(p)
	if g.bw != nil && n > 0 {
		berr := g.see(g.bw, g.bodyLen-g.body, p[:n])
		if g.bw.pending == 0 {
			g.bw = nil
		}
		if berr != nil {
			g.pos += int64(n)
			g.err, g.body = berr, 0 // the batch never reaches the reader whole
			return 0, berr
		}
	}
	g.pos += int64(n)
	g.body -= int64(n)
	switch {
	case err == io.EOF && g.body > 0:
		err = g.cut()
	case g.body == 0:
		g.whole++
	}
	return n, err
}

// afterEnd checks, once the arrow reader has stopped, that r holds nothing
// after the end-of-stream marker: the reader stops at the marker, so a
// second stream appended to the first (cat a.arrows b.arrows) or garbage
// would be dropped unread. It reads r to its end, as a spool or a pipe's
// writer closing it ends it.
func (g *framedReader) afterEnd() error {
	if !g.ended {
		return nil
	}
	var b [1]byte
	n, err := io.ReadFull(g.r, b[:])
	if n == 0 {
		if err == io.EOF {
			return nil
		}
		return err
	}
	return &CorruptError{Format: "Arrow IPC stream", Err: fmt.Errorf(
		"data follows its end-of-stream marker at byte %d (streams joined? give each its own input)", g.pos)}
}

// fill reads len(p) bytes of the current message from r. r ending
// before then is a CutError, unless nothing of the message was read:
// then it is the end of the stream, io.EOF.
func (g *framedReader) fill(p []byte) error {
	n := 0
	var err error
	for n < len(p) && err == nil {
		var k int
		k, err = g.r.Read(p[n:])
		n += k
	}
	g.pos += int64(n)
	switch {
	case n == len(p):
		return nil
	case err == io.EOF && g.pos > g.start:
		return g.cut()
	}
	return err
}

// cut is the error for r ending inside the current message.
func (g *framedReader) cut() error {
	return &CutError{Whole: g.start, Size: g.pos, Schema: g.whole > 0}
}

// next reads the next message's prefix and metadata into pending.
func (g *framedReader) next() error {
	g.start = g.pos
	var h [8]byte
	if err := g.fill(h[:4]); err != nil {
		if err == io.EOF && g.needEnd && g.whole > 0 {
			return &CutError{Whole: g.start, Size: g.pos, Schema: true, NoEnd: true}
		}
		return err
	}
	g.pending = append(g.pending[:0], h[:4]...)
	n := binary.LittleEndian.Uint32(h[:4])
	if n == 0xffffffff { // continuation marker, then the length
		if err := g.fill(h[4:]); err != nil {
			return err
		}
		g.pending = append(g.pending, h[4:]...)
		n = binary.LittleEndian.Uint32(h[4:])
	}
	if n == 0 {
		g.ended = true
		return nil // end of stream
	}
	if int32(n) < 0 || int64(n) > g.lim.MaxArrowMetadata {
		return fmt.Errorf("%w: an Arrow message declares %d bytes of metadata (limit %d)", ErrLimit, int32(n), g.lim.MaxArrowMetadata)
	}
	meta := make([]byte, n)
	if err := g.fill(meta); err != nil {
		return err
	}
	g.pending = append(g.pending, meta...)
	body, err := checkMessage(meta)
	switch {
	case err != nil:
		return &CorruptError{Format: "Arrow IPC stream", Err: err}
	case body > g.lim.MaxArrowBuffer:
		return fmt.Errorf("%w: an Arrow message declares a %d-byte body (limit %d)", ErrLimit, body, g.lim.MaxArrowBuffer)
	}
	bw, err := g.watchBatch(meta)
	if err != nil {
		return err
	}
	if body > preReadOver {
		// The reader allocates the body before reading it: for a large
		// one, read it first, growing with what arrives, so that a lie
		// costs only the bytes actually sent.
		var buf bytes.Buffer
		buf.Write(g.pending)
		got, err := io.CopyN(&buf, g.r, body)
		g.pos += got
		if err == io.EOF {
			return g.cut()
		}
		if err != nil {
			return &CorruptError{Format: "Arrow IPC stream", Err: fmt.Errorf("a message declares a %d-byte body: %v", body, err)}
		}
		if bw != nil {
			if err := g.see(bw, 0, buf.Bytes()[buf.Len()-int(body):]); err != nil {
				return err
			}
		}
		g.pending = buf.Bytes()
		return nil
	}
	g.body, g.bodyLen, g.bw = body, body, bw
	return nil
}

// preReadOver is the body size above which framedReader reads a message
// body before the Arrow reader allocates it (a variable for tests).
var preReadOver int64 = 64 << 20

// Arrow reads message metadata, a flatbuffer, without verifying it: it
// makes slices as long as the vectors of fields, children and metadata
// declare, and follows children recursively. checkMessage verifies those
// vectors (each element is a 4-byte offset, so a vector cannot hold more
// elements than a quarter of the bytes after it), bounds the nesting and
// the fields visited, and returns the message's body length.

// fbTable is a flatbuffer table at pos in b.
type fbTable struct {
	b          []byte
	pos, vt    int64
	vtableSize int64
}

var errFlatbuffer = errors.New("malformed message metadata")

func (b fbBytes) u32(off int64) (int64, error) {
	if off < 0 || off+4 > int64(len(b)) {
		return 0, errFlatbuffer
	}
	return int64(binary.LittleEndian.Uint32(b[off:])), nil
}

type fbBytes []byte

// table reads the table an offset at off points to.
func (b fbBytes) table(off int64) (fbTable, error) {
	rel, err := b.u32(off)
	if err != nil {
		return fbTable{}, err
	}
	pos := off + rel
	so, err := b.u32(pos)
	if err != nil {
		return fbTable{}, err
	}
	vt := pos - int64(int32(uint32(so)))
	if vt < 0 || vt+4 > int64(len(b)) {
		return fbTable{}, errFlatbuffer
	}
	return fbTable{b: b, pos: pos, vt: vt, vtableSize: int64(binary.LittleEndian.Uint16(b[vt:]))}, nil
}

// field returns the position of field slot, or 0 if absent.
func (t fbTable) field(slot int) (int64, error) {
	o := 4 + 2*int64(slot)
	if o >= t.vtableSize {
		return 0, nil
	}
	if t.vt+o+2 > int64(len(t.b)) {
		return 0, errFlatbuffer
	}
	off := int64(binary.LittleEndian.Uint16(t.b[t.vt+o:]))
	if off == 0 {
		return 0, nil
	}
	return t.pos + off, nil
}

// vector returns the position of the first element and the length of the
// vector field slot, checking that elements of size bytes fit.
func (t fbTable) vector(slot int, size int64) (int64, int64, error) {
	p, err := t.field(slot)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	rel, err := fbBytes(t.b).u32(p)
	if err != nil {
		return 0, 0, err
	}
	start := p + rel
	n, err := fbBytes(t.b).u32(start)
	if err != nil {
		return 0, 0, err
	}
	if n*size > int64(len(t.b))-start-4 {
		return 0, 0, errFlatbuffer
	}
	return start + 4, n, nil
}

// checkMessage verifies a message's metadata and returns its body length.
func checkMessage(meta []byte) (int64, error) {
	b := fbBytes(meta)
	msg, err := b.table(0)
	if err != nil {
		return 0, err
	}
	var body int64
	if p, err := msg.field(3); err != nil {
		return 0, err
	} else if p != 0 {
		if p+8 > int64(len(b)) {
			return 0, errFlatbuffer
		}
		body = int64(binary.LittleEndian.Uint64(b[p:]))
	}
	if body < 0 {
		return 0, fmt.Errorf("message body of %d bytes", body)
	}
	typ, err := msg.field(1)
	if err != nil || typ == 0 || typ >= int64(len(b)) {
		return body, err
	}
	hp, err := msg.field(2)
	if err != nil || hp == 0 {
		return body, err
	}
	header, err := b.table(hp)
	if err != nil {
		return 0, err
	}
	switch b[typ] {
	case 1: // Schema
		return body, checkSchema(header)
	case 2: // DictionaryBatch: its data (slot 1) is a RecordBatch
		p, err := header.field(1)
		if err != nil || p == 0 {
			return body, err
		}
		rb, err := b.table(p)
		if err != nil {
			return 0, err
		}
		return body, checkBuffers(rb, body)
	case 3: // RecordBatch
		return body, checkBuffers(header, body)
	}
	return body, nil
}

// checkBuffers checks that the buffers of a RecordBatch table lie within
// the body: the reader allocates each buffer's declared length and then
// reads it from the body.
func checkBuffers(rb fbTable, body int64) error {
	if _, _, err := rb.vector(1, 16); err != nil { // nodes
		return err
	}
	start, n, err := rb.vector(2, 16) // buffers: {offset, length int64}
	if err != nil {
		return err
	}
	for i := int64(0); i < n; i++ {
		off := int64(binary.LittleEndian.Uint64(rb.b[start+16*i:]))
		size := int64(binary.LittleEndian.Uint64(rb.b[start+16*i+8:]))
		if off < 0 || size < 0 || off > body || size > body-off {
			return fmt.Errorf("buffer %d (%d bytes at %d) outside the %d-byte body", i, size, off, body)
		}
	}
	return nil
}

// checkSchema checks a Schema table's vectors.
func checkSchema(schema fbTable) error {
	budget := int64(len(schema.b)) / 4                // fields a schema this size can hold
	if _, _, err := schema.vector(2, 4); err != nil { // custom_metadata
		return err
	}
	return checkFields(schema, 1, 0, &budget)
}

// checkFields checks the vector of Field tables in slot of t, recursively.
func checkFields(t fbTable, slot, depth int, budget *int64) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("arrow fields nested deeper than %d", maxThriftDepth)
	}
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	if *budget -= n; *budget < 0 {
		return errors.New("arrow schema reuses its tables")
	}
	for i := int64(0); i < n; i++ {
		f, err := fbBytes(t.b).table(start + 4*i)
		if err != nil {
			return err
		}
		if _, _, err := f.vector(6, 4); err != nil { // custom_metadata
			return err
		}
		if err := checkFields(f, 5, depth+1, budget); err != nil { // children
			return err
		}
	}
	return nil
}
