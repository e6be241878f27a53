package textenc

import (
	"fmt"

	"github.com/infohash/infohash/formats/schema"
)

// A hash column may hold text (DuckDB's VARCHAR, Arrow's utf8): its
// values are then hex, 40 digits for a v1 hash and 64 for a v2 one, in
// either case, as in hash lists. Bytes of text taken as a hash would be
// wrong (32 hex digits read as a 32-byte v2 hash, 20 characters as a v1
// hash): any other text is bad input. A column of bytes (a BLOB, a
// FIXED_LEN_BYTE_ARRAY, Arrow's binary) holds the hash itself, never its
// hex. dedup, fetch and merge read an info_hash by that rule (HashValue;
// dedup's column reader calls it on each value of a text page, or of its
// dictionary; readers that check bytes where they lie, such as its pages
// of bytes, call HashBytesError), and say what is wrong with a value with
// HexHashError. An info_hash_v2 holds a full v2 hash or none, by
// V2Value's rule (V2BytesError its part for bytes).

// What a text hash column must hold, for HexHashError.
const (
	WantHexHash = "a hex infohash (40 or 64 digits)"
	WantHexV1   = "a hex infohash (40 digits)"
	WantHexV2   = "a hex v2 hash (64 digits)"
)

// HashValue decodes v, a value of the info_hash column col, into dst and
// returns the hash's length: 20, or 32 for a full v2 hash when v2 is set
// (a stage that keys a v2 hash by its first 20 bytes); or 0 and why not,
// as one line. typ is the string type of the column (rowio.TextType,
// rowio.ArrowTextType): a column of text holds hex (40 digits, or 64),
// one of bytes (typ "") the hash's own bytes, whatever the length of v
// (20 characters of text are no hash, nor 40 bytes of a BLOB its hex).
func HashValue[S ~string | ~[]byte](dst *[32]byte, col, typ string, v S, v2 bool) (int, string) {
	if typ != "" {
		n, want := UnhexHash(dst, v), WantHexHash
		if !v2 {
			want = WantHexV1
		}
		if n == 20 || n == 32 && v2 {
			return n, ""
		}
		return 0, HexHashError(col, typ, v, want)
	}
	if msg := HashBytesError(col, len(v), v2); msg != "" {
		return 0, msg
	}
	copy(dst[:], v)
	return len(v), ""
}

// HashBytesError is the rule for an info_hash col held as bytes (a BLOB,
// a FIXED_LEN_BYTE_ARRAY, Arrow's binary) of n bytes: "" for a hash (20
// bytes, or 32 for a full v2 hash when v2 is set), else why not, as one
// line. HashValue reads bytes by it; a reader that keeps a value's bytes
// where they are (no copy) checks them by it alone.
func HashBytesError(col string, n int, v2 bool) string {
	switch {
	case n == 20, n == 32 && v2:
		return ""
	case v2:
		return fmt.Sprintf("%s has %d bytes, want 20 (or 32 for v2)", col, n)
	default:
		return fmt.Sprintf("%s has %d bytes, want 20", col, n)
	}
}

// V2Value decodes v, a value of the info_hash_v2 column col, into dst
// and returns 32 for a full v2 hash, 0 for none (an empty value: null, as
// infohash's own files write one), or 0 and why v is neither, as one line.
// typ is the column's string type, as for HashValue: text holds 64 hex
// digits, bytes (typ "") the hash's own 32 (V2BytesError); never the
// other way, nor a cut hash (the schema promises the full one).
func V2Value[S ~string | ~[]byte](dst *[32]byte, col, typ string, v S) (int, string) {
	switch {
	case len(v) == 0:
		return 0, ""
	case typ != "":
		if UnhexHash(dst, v) == 32 {
			return 32, ""
		}
		return 0, HexHashError(col, typ, v, WantHexV2)
	}
	if msg := V2BytesError(col, len(v)); msg != "" {
		return 0, msg
	}
	copy(dst[:], v)
	return 32, ""
}

// V2BytesError is the rule for an info_hash_v2 col held as bytes (a BLOB,
// Arrow's binary) of n bytes: "" for a full v2 hash (32 bytes) or none (0,
// null as infohash's own files write one), else why not, as one line.
// V2Value reads bytes by it; a reader that keeps a value's bytes where
// they are checks them by it alone.
func V2BytesError(col string, n int) string {
	if n == 0 || n == 32 {
		return ""
	}
	return fmt.Sprintf("%s has %d bytes, want 32", col, n)
}

// UnhexHash decodes s, 40 or 64 hex digits in either case and nothing
// else (no space, no prefix), into dst and returns the hash's length (20
// or 32), or 0 if s is not such a hash; dst may then hold part of s.
func UnhexHash[S ~string | ~[]byte](dst *[32]byte, s S) int {
	if len(s) != 40 && len(s) != 64 {
		return 0
	}
	for i := 0; i < len(s); i += 2 {
		hi, lo := unhexDigit(s[i]), unhexDigit(s[i+1])
		if hi > 15 || lo > 15 {
			return 0
		}
		dst[i/2] = hi<<4 | lo
	}
	return len(s) / 2
}

func unhexDigit(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// HexHashError says that v, a value of the text column col (of string
// type typ, such as STRING or utf8), is not what the column must hold
// (want: WantHexHash or WantHexV2), v quoted by schema.Quote.
func HexHashError[S ~string | ~[]byte](col, typ string, v S, want string) string {
	return fmt.Sprintf("%s %s (a %s column) is not %s", col, schema.Quote(string(v)), typ, want)
}
