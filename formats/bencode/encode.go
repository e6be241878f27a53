package bencode

import "strconv"

// Encoder appends bencode to B, one token per call; the calls chain
// (e.Dict().Str("id").Bytes(id).End()). It checks nothing: the caller
// writes dictionary keys as strings, in sorted order and once each (BEP 3),
// a value after each key, and an End for each Dict and List.
// Integers and string lengths come out in canonical decimal, so a Decoder
// reads back what was written, math.MinInt64 excepted (Decoder refuses it).
type Encoder struct{ B []byte }

// Dict opens a dictionary.
func (e *Encoder) Dict() *Encoder { e.B = append(e.B, 'd'); return e }

// List opens a list.
func (e *Encoder) List() *Encoder { e.B = append(e.B, 'l'); return e }

// End closes the innermost dictionary or list.
func (e *Encoder) End() *Encoder { e.B = append(e.B, 'e'); return e }

// Bytes appends a byte string.
func (e *Encoder) Bytes(s []byte) *Encoder { e.B = appendString(e.B, s); return e }

// Str appends a string.
func (e *Encoder) Str(s string) *Encoder { e.B = appendString(e.B, s); return e }

// Int appends an integer.
func (e *Encoder) Int(v int64) *Encoder {
	e.B = append(e.B, 'i')
	e.B = strconv.AppendInt(e.B, v, 10)
	e.B = append(e.B, 'e')
	return e
}

func appendString[S string | []byte](b []byte, s S) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}
