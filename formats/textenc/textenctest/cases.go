// Package textenctest holds textenc.HashValue's cases, for the tests of
// the readers that must read an info_hash by the same rule (dedup's
// Parquet column reader checks a page's values itself).
package textenctest

import (
	"bytes"
	"encoding/hex"
	"fmt"
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

// LengthCase is a value of an info_hash column of N bytes or characters,
// all of them hex digits ("abab…"), in a column of text or of bytes, and
// the verdict of the one rule every reader holds to (HashValue): the
// hash's length where a full v2 hash may stand (Want) and where not
// (WantV1), 0 for a refusal, whose message ends with Msg (MsgV1).
type LengthCase struct {
	Name         string
	Text         bool // a text column, else one of bytes
	V            string
	Want, WantV1 int
	Msg, MsgV1   string // %s: the text column's type
	Hash         []byte // what the hash holds when read (Want bytes)
}

// LengthCases are the values of 19, 20, 21, 32, 33, 40 and 64 bytes, and
// as many hex digits of text: text is a hash at 40 digits (v1) and 64 (a
// v2 hash, where one may stand), bytes at 20 and 32 (v2), nothing else.
func LengthCases() []LengthCase {
	digits := strings.Repeat("ab", 32)
	var out []LengthCase
	for _, text := range []bool{true, false} {
		for _, n := range []int{19, 20, 21, 32, 33, 40, 64} {
			c := LengthCase{Text: text, V: digits[:n]}
			if text {
				c.Name = fmt.Sprintf("text, %d digits", n)
				quoted := `"` + c.V + `"`
				if n > 55 {
					quoted = `"` + c.V[:55] + `"...`
				}
				c.Msg = "info_hash " + quoted + " (a %s column) is not a hex infohash (40 or 64 digits)"
				c.MsgV1 = "info_hash " + quoted + " (a %s column) is not a hex infohash (40 digits)"
				switch n {
				case 40:
					c.Want, c.WantV1 = 20, 20
				case 64:
					c.Want = 32
				}
				if c.Want > 0 {
					c.Hash, _ = hex.DecodeString(c.V)
				}
			} else {
				c.Name = fmt.Sprintf("bytes, %d", n)
				c.Msg = fmt.Sprintf("info_hash has %d bytes, want 20 (or 32 for v2)", n)
				c.MsgV1 = fmt.Sprintf("info_hash has %d bytes, want 20", n)
				switch n {
				case 20:
					c.Want, c.WantV1 = 20, 20
				case 32:
					c.Want = 32
				}
				if c.Want > 0 {
					c.Hash = []byte(c.V)
				}
			}
			if c.Want > 0 {
				c.Msg = ""
			}
			if c.WantV1 > 0 {
				c.MsgV1 = ""
			}
			out = append(out, c)
		}
	}
	return out
}

// Verdict is c's verdict with a v2 hash allowed or not: the hash's length
// (0: refused) and the refusal, its text column of type typ.
func (c LengthCase) Verdict(v2 bool, typ string) (int, string) {
	if v2 {
		return c.Want, strings.Replace(c.Msg, "%s", typ, 1)
	}
	return c.WantV1, strings.Replace(c.MsgV1, "%s", typ, 1)
}
