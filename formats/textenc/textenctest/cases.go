// Package textenctest holds textenc.HashValue's cases, for the tests of
// the readers that must read an info_hash by the same rule (dedup's
// Parquet column reader checks a page's values itself).
package textenctest

import (
	"bytes"
	"encoding/hex"
	"strings"
)

// HashCase is a value of an info_hash column and what HashValue makes of
// it.
type HashCase struct {
	Name string
	Typ  string // the column's string type, "" for bytes
	V    string
	V2   bool   // a full v2 hash may stand
	Want int    // the hash's length; 0: refused with Msg
	Msg  string // the end of the refusal ("" when read)
}

// Hash is the hash every case's value holds when it holds one (32 bytes;
// a v1 hash is its first 20).
var Hash = bytes.Repeat([]byte{0xab}, 32)

// HashCases are HashValue's cases: an info_hash of a text column is hex
// (40 digits, or 64 where a full v2 hash may stand), of a column of bytes
// the hash's own bytes (20, or 32), never the other way, whatever its
// length.
func HashCases() []HashCase {
	h := Hash
	hex20, hex32 := hex.EncodeToString(h[:20]), hex.EncodeToString(h)
	const v1, v1v2 = "a hex infohash (40 digits)", "a hex infohash (40 or 64 digits)"
	return []HashCase{
		{"text, 40 digits", "STRING", hex20, false, 20, ""},
		{"text, 40 upper-case digits", "utf8", strings.ToUpper(hex20), true, 20, ""},
		{"text, 64 digits", "STRING", hex32, true, 32, ""},
		{"text, 64 digits, no v2", "STRING", hex32, false, 0, `info_hash "` + hex32[:55] + `"... (a STRING column) is not ` + v1},
		{"text, 20 characters", "STRING", string(h[:20]), false, 0, `(a STRING column) is not ` + v1},
		{"text, 20 characters, v2", "utf8", "abcdefghij0123456789", true, 0,
			`info_hash "abcdefghij0123456789" (a utf8 column) is not ` + v1v2},
		{"bytes, 20", "", string(h[:20]), false, 20, ""},
		{"bytes, 32", "", string(h), true, 32, ""},
		{"bytes, 32, no v2", "", string(h), false, 0, "info_hash has 32 bytes, want 20"},
		{"bytes, 40 hex digits", "", hex20, true, 0, "info_hash has 40 bytes, want 20 (or 32 for v2)"},
		{"bytes, 40 hex digits, no v2", "", hex20, false, 0, "info_hash has 40 bytes, want 20"},
	}
}
