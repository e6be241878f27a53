package textenc

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHashValue holds HashValue and V2Value, the rule dedup, fetch and
// merge read a hash column's values by, to a reference on any value: of
// a text column (typ set), a hash exactly when encoding/hex decodes the
// value to 20 bytes (or 32 where a v2 hash may stand, and always for
// info_hash_v2, which also takes an empty value as none); of a column of
// bytes, the value itself when 20 or 32 bytes long likewise. A value
// read as a string or as bytes reads alike, and a refusal is one line of
// valid UTF-8 naming the column.
func FuzzHashValue(f *testing.F) {
	f.Add([]byte(strings.Repeat("ab", 20)), true, false)
	f.Add([]byte(strings.Repeat("AB", 32)), true, true)
	f.Add(bytes.Repeat([]byte{0xff}, 20), false, false)
	f.Add(bytes.Repeat([]byte{0}, 32), false, true)
	f.Add([]byte("\xff\n"+strings.Repeat("a", 38)), true, true)
	f.Add([]byte{}, false, true)
	f.Fuzz(func(t *testing.T, v []byte, text, v2 bool) {
		typ := ""
		if text {
			typ = "STRING"
		}
		want := v
		if text {
			d, err := hex.DecodeString(string(v))
			if err != nil {
				d = nil
			}
			want = d
		}
		ok := len(want) == 20 || len(want) == 32 && v2
		var dst, dsts [32]byte
		n, msg := HashValue(&dst, "info_hash", typ, v, v2)
		ns, msgs := HashValue(&dsts, "info_hash", typ, string(v), v2)
		switch {
		case n != ns || msg != msgs || dst != dsts:
			t.Fatalf("%q: bytes read as %d %q, a string as %d %q", v, n, msg, ns, msgs)
		case ok && (n != len(want) || !bytes.Equal(dst[:n], want) || msg != ""):
			t.Fatalf("%q (text %v, v2 %v): got %d %x %q, want %x", v, text, v2, n, dst[:n], msg, want)
		case !ok && (n != 0 || !oneLine(msg, "info_hash")):
			t.Fatalf("%q (text %v, v2 %v): got %d %q, want a refusal", v, text, v2, n, msg)
		}
		okV2 := len(v) == 0 || len(want) == 32
		n, msg = V2Value(&dst, "info_hash_v2", typ, v)
		ns, msgs = V2Value(&dsts, "info_hash_v2", typ, string(v))
		switch {
		case n != ns || msg != msgs || n > 0 && dst != dsts:
			t.Fatalf("%q: bytes read as %d %q, a string as %d %q", v, n, msg, ns, msgs)
		case okV2 && (n != len(want) || !bytes.Equal(dst[:n], want) || msg != ""):
			t.Fatalf("info_hash_v2 %q (text %v): got %d %x %q, want %x", v, text, n, dst[:n], msg, want)
		case !okV2 && (n != 0 || !oneLine(msg, "info_hash_v2")):
			t.Fatalf("info_hash_v2 %q (text %v): got %d %q, want a refusal", v, text, n, msg)
		}
	})
}

// oneLine reports whether msg is a refusal: one line of bounded, valid
// UTF-8 that starts with the column's name.
func oneLine(msg, col string) bool {
	return strings.HasPrefix(msg, col+" ") && !strings.Contains(msg, "\n") && utf8.ValidString(msg) && len(msg) < 300
}
