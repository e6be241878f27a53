package merge

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/schema"
)

// Flags of an encoded schema.Meta: its bools, and which slices and
// pointers are non-nil (null and empty, or null and 0, differ in the rows
// read, and a torrents file is written from what was read).
const (
	flagNameUTF8Valid = 1 << iota
	flagPrivate
	flagNameRaw
	flagFiles
	flagInfoBytes
	flagName
	flagTotalSize
	flagPieceLength
	flagFileCount
)

// appendMeta appends the encoding of m to b: every field, so that
// decodeMeta gives back m exactly (a nil slice or pointer as nil, an
// empty one as empty, a pointer to 0 as that).
func appendMeta(b []byte, m *schema.Meta) []byte {
	var flags uint64
	for _, f := range []struct {
		on   bool
		flag uint64
	}{{m.NameUTF8Valid, flagNameUTF8Valid}, {m.Private, flagPrivate}, {m.NameRaw != nil, flagNameRaw},
		{m.Files != nil, flagFiles}, {m.InfoBytes != nil, flagInfoBytes}, {m.Name != nil, flagName},
		{m.TotalSize != nil, flagTotalSize}, {m.PieceLength != nil, flagPieceLength}, {m.FileCount != nil, flagFileCount}} {
		if f.on {
			flags |= f.flag
		}
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendVarint(b, deref(m.TotalSize))
	b = binary.AppendVarint(b, deref(m.PieceLength))
	b = binary.AppendVarint(b, int64(deref(m.FileCount)))
	b = appendBytes(b, m.NameOr())
	b = appendBytes(b, m.NameRaw)
	b = binary.AppendUvarint(b, uint64(len(m.Files)))
	for i := range m.Files {
		f := &m.Files[i]
		b = appendBytes(b, f.Path)
		b = append(b, nilFlag(f.PathRaw))
		b = appendBytes(b, f.PathRaw)
		b = binary.AppendVarint(b, f.Length)
	}
	return appendBytes(b, m.InfoBytes)
}

func appendBytes[S string | []byte](b []byte, s S) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// deref is *p, or 0 for nil.
func deref[T int32 | int64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// ptrIf is a pointer to v when on, else nil.
func ptrIf[T any](on bool, v T) *T {
	if !on {
		return nil
	}
	return &v
}

func nilFlag(b []byte) byte {
	if b == nil {
		return 0
	}
	return 1
}

// errMetaCodec is what decodeMeta returns on bytes appendMeta did not
// write.
var errMetaCodec = errors.New("malformed spilled metadata")

// decodeMeta decodes what appendMeta wrote. The slices of the result
// share b's array.
func decodeMeta(b []byte) (schema.Meta, error) {
	d := metaDecoder{b: b}
	var m schema.Meta
	flags := d.uvarint()
	m.NameUTF8Valid, m.Private = flags&flagNameUTF8Valid != 0, flags&flagPrivate != 0
	m.TotalSize = ptrIf(flags&flagTotalSize != 0, d.varint())
	m.PieceLength = ptrIf(flags&flagPieceLength != 0, d.varint())
	m.FileCount = ptrIf(flags&flagFileCount != 0, int32(d.varint()))
	m.Name = ptrIf(flags&flagName != 0, string(d.bytes(true)))
	m.NameRaw = d.bytes(flags&flagNameRaw != 0)
	if n := d.uvarint(); flags&flagFiles != 0 && d.err == nil {
		if n > uint64(len(d.b)) { // each file takes at least a byte
			return m, fmt.Errorf("%w: %d files in %d bytes", errMetaCodec, n, len(d.b))
		}
		m.Files = make([]schema.File, n)
		for i := range m.Files {
			f := &m.Files[i]
			f.Path = string(d.bytes(true))
			f.PathRaw = d.bytes(d.byte() != 0)
			f.Length = d.varint()
		}
	}
	m.InfoBytes = d.bytes(flags&flagInfoBytes != 0)
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%w: %d bytes past the end", errMetaCodec, len(d.b))
	}
	return m, d.err
}

// metaDecoder reads b front to back; the first error sticks.
type metaDecoder struct {
	b   []byte
	err error
}

func (d *metaDecoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated", errMetaCodec)
	}
	d.b = nil
}

func (d *metaDecoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *metaDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *metaDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes reads a length and that many bytes; nil unless present (a
// present empty value is empty, not nil).
func (d *metaDecoder) bytes(present bool) []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	if !present {
		return nil
	}
	if v == nil {
		v = []byte{}
	}
	return v
}
