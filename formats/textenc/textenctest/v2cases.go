package textenctest

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// V2LengthCase is a value of an info_hash_v2 column of N bytes or
// characters, all of them hex digits ("abab…"), in a column of text or of
// bytes, and the verdict of the one rule every reader holds to
// (textenc.V2Value): 32 for a full v2 hash, 0 for none (Msg "") or for a
// refusal, whose message is Msg.
type V2LengthCase struct {
	Name string
	Text bool // a text column, else one of bytes
	V    string
	Want int
	Msg  string // %s: the text column's type
	Hash []byte // the hash read (Want bytes)
}

// V2LengthCases are the values of 0, 19, 20, 21, 31, 32, 33, 40 and 64
// bytes, and as many hex digits of text: text is a v2 hash at 64 digits,
// bytes at 32; an empty value is none (null, as infohash's own files
// write one); nothing else is either. A value's first 20 bytes, or its
// first 40 digits, are those of LengthCases' values: a row whose
// info_hash is one of them names the same hash.
func V2LengthCases() []V2LengthCase {
	digits := strings.Repeat("ab", 32)
	var out []V2LengthCase
	for _, text := range []bool{true, false} {
		for _, n := range []int{0, 19, 20, 21, 31, 32, 33, 40, 64} {
			c := V2LengthCase{Text: text, V: digits[:n]}
			if text {
				c.Name = fmt.Sprintf("text, %d digits", n)
				quoted := `"` + c.V + `"`
				if n > 55 {
					quoted = `"` + c.V[:55] + `"...`
				}
				c.Msg = "info_hash_v2 " + quoted + " (a %s column) is not a hex v2 hash (64 digits)"
				if n == 64 {
					c.Want, c.Hash = 32, must(hex.DecodeString(c.V))
				}
			} else {
				c.Name = fmt.Sprintf("bytes, %d", n)
				c.Msg = fmt.Sprintf("info_hash_v2 has %d bytes, want 32", n)
				if n == 32 {
					c.Want, c.Hash = 32, []byte(c.V)
				}
			}
			if n == 0 || c.Want > 0 {
				c.Msg = ""
			}
			out = append(out, c)
		}
	}
	return out
}

// Verdict is c's verdict: the hash's length (0: none, or refused) and
// the refusal ("" for none), its text column of type typ.
func (c V2LengthCase) Verdict(typ string) (int, string) {
	return c.Want, strings.Replace(c.Msg, "%s", typ, 1)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
