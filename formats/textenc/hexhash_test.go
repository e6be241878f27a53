package textenc

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/infohash/infohash/formats/textenc/textenctest"
)

func TestUnhexHash(t *testing.T) {
	const v1 = "0123456789abcdef0123456789ABCDEF01234567"
	tests := []struct {
		name, in string
		want     int
	}{
		{"v1", v1, 20},
		{"v1 upper case", strings.ToUpper(v1), 20},
		{"v1 lower case", strings.ToLower(v1), 20},
		{"v2", v1 + "89abcdef0123456789abcdef", 32},
		{"32 digits", v1[:32], 0},
		{"39 digits", v1[:39], 0},
		{"41 digits", v1 + "0", 0},
		{"63 digits", v1 + "89abcdef0123456789abcde", 0},
		{"not hex", "zz" + v1[2:], 0},
		{"last digit not hex", v1[:39] + "g", 0},
		{"empty", "", 0},
		{"leading space", " " + v1[1:], 0},
		{"trailing newline", v1[:39] + "\n", 0},
		{"0x prefix", "0x" + v1[2:], 0},
		{"non-ASCII", "é" + v1[2:], 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h, hb [32]byte
			n := UnhexHash(&h, tt.in)
			if nb := UnhexHash(&hb, []byte(tt.in)); n != tt.want || nb != n {
				t.Fatalf("n = %d (%d from bytes), want %d", n, nb, tt.want)
			}
			if want, _ := hex.DecodeString(tt.in); n > 0 && (!bytes.Equal(h[:n], want) || !bytes.Equal(hb[:n], want)) {
				t.Fatalf("%x, want %x", h[:n], want)
			}
		})
	}
}

func TestHexHashError(t *testing.T) {
	tests := []struct {
		name, col, typ, v, want, msg string
	}{
		{"short", "info_hash", "STRING", "abc", WantHexHash, `info_hash "abc" (a STRING column) is not ` + WantHexHash},
		{"control bytes", "info_hash_v2", "utf8", "a\x1f\xff", WantHexV2, `info_hash_v2 "a\x1f\xff" (a utf8 column) is not ` + WantHexV2},
		{"long", "info_hash", "STRING", strings.Repeat("a", 100), WantHexHash,
			`info_hash "` + strings.Repeat("a", 55) + `"... (a STRING column) is not ` + WantHexHash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HexHashError(tt.col, tt.typ, tt.v, tt.want); got != tt.msg {
				t.Fatalf("got  %s\nwant %s", got, tt.msg)
			}
		})
	}
}

// FuzzUnhexHash holds UnhexHash to encoding/hex: a hash exactly when s is
// 40 or 64 hex digits, with the bytes hex decodes, from a string or its
// bytes alike; and HexHashError quotes any value in bounded UTF-8.
func FuzzUnhexHash(f *testing.F) {
	for _, s := range []string{"", strings.Repeat("ab", 20), strings.Repeat("AB", 32), strings.Repeat("zz", 20), " " + strings.Repeat("a", 39), "\xff\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var h, hb [32]byte
		n, nb := UnhexHash(&h, s), UnhexHash(&hb, []byte(s))
		if n != nb || (n > 0 && h != hb) {
			t.Fatalf("%q: string gives %d %x, bytes %d %x", s, n, h[:n], nb, hb[:nb])
		}
		want, err := hex.DecodeString(s)
		ok := err == nil && (len(s) == 40 || len(s) == 64)
		switch {
		case ok && (n != len(s)/2 || !bytes.Equal(h[:n], want)):
			t.Fatalf("%q: got %d %x, want %x", s, n, h[:n], want)
		case !ok && n != 0:
			t.Fatalf("%q: got a %d-byte hash, want none", s, n)
		}
		msg := HexHashError("info_hash", "STRING", s, WantHexHash)
		if !utf8.ValidString(msg) || len(msg) > 200 {
			t.Fatalf("%q: error %q not bounded UTF-8", s, msg)
		}
	})
}

// TestHashValue: an info_hash of a text column is hex (40 digits, or 64
// where a full v2 hash may stand), of a column of bytes the hash's own
// bytes (20, or 32): never the other way, whatever its length. merge took
// 20 characters of text as the hash's bytes, and 40 bytes of a BLOB as
// hex, where dedup and fetch refused both. The cases are textenctest's,
// which dedup's column reader is held to too.
func TestHashValue(t *testing.T) {
	if WantHexV1 != "a hex infohash (40 digits)" || WantHexHash != "a hex infohash (40 or 64 digits)" {
		t.Fatalf("the wants differ from textenctest's: %q, %q", WantHexV1, WantHexHash)
	}
	h := textenctest.Hash
	for _, tt := range textenctest.HashCases() {
		t.Run(tt.Name, func(t *testing.T) {
			var dst [32]byte
			n, msg := HashValue(&dst, "info_hash", tt.Typ, tt.V, tt.V2)
			if nb, msgb := HashValue(&dst, "info_hash", tt.Typ, []byte(tt.V), tt.V2); nb != n || msgb != msg {
				t.Fatalf("from bytes: %d %q; from a string: %d %q", nb, msgb, n, msg)
			}
			if n != tt.Want || (n == 0) != (msg != "") || !strings.HasSuffix(msg, tt.Msg) {
				t.Fatalf("got %d %q, want %d %q", n, msg, tt.Want, tt.Msg)
			}
			if n > 0 && !bytes.Equal(dst[:n], h[:n]) {
				t.Fatalf("hash %x, want %x", dst[:n], h[:n])
			}
		})
	}
}

// TestHashValueLengths: the values of textenctest.LengthCases, from a
// text column (STRING) and one of bytes, read as the table says, with a
// v2 hash allowed and not; HashBytesError, the rule's part for bytes,
// agrees with HashValue on every length of bytes.
func TestHashValueLengths(t *testing.T) {
	for _, tt := range textenctest.LengthCases() {
		typ := ""
		if tt.Text {
			typ = "STRING"
		}
		for _, v2 := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/v2 %v", tt.Name, v2), func(t *testing.T) {
				want, msg := tt.Verdict(v2, typ)
				var dst [32]byte
				n, got := HashValue(&dst, "info_hash", typ, tt.V, v2)
				if n != want || got != msg {
					t.Fatalf("got %d %q, want %d %q", n, got, want, msg)
				}
				if n > 0 && !bytes.Equal(dst[:n], tt.Hash[:n]) {
					t.Fatalf("hash %x, want %x", dst[:n], tt.Hash[:n])
				}
				if !tt.Text {
					if b := HashBytesError("info_hash", len(tt.V), v2); b != got {
						t.Fatalf("HashBytesError: %q, HashValue: %q", b, got)
					}
				}
			})
		}
	}
}

// TestV2ValueLengths: the values of textenctest.V2LengthCases, from a
// text column (utf8) and one of bytes, given as a string and as bytes,
// read as the table says: a full v2 hash (64 digits, 32 bytes), none
// (empty), or refused; V2BytesError, the rule's part for bytes, agrees
// with V2Value on every length of bytes.
func TestV2ValueLengths(t *testing.T) {
	for _, tt := range textenctest.V2LengthCases() {
		t.Run(tt.Name, func(t *testing.T) {
			typ := ""
			if tt.Text {
				typ = "utf8"
			}
			want, msg := tt.Verdict(typ)
			var dst, dstb [32]byte
			n, got := V2Value(&dst, "info_hash_v2", typ, tt.V)
			if n != want || got != msg {
				t.Fatalf("got %d %q, want %d %q", n, got, want, msg)
			}
			if nb, gotb := V2Value(&dstb, "info_hash_v2", typ, []byte(tt.V)); nb != n || gotb != got || dstb != dst {
				t.Fatalf("from bytes: %d %q %x; from a string: %d %q %x", nb, gotb, dstb, n, got, dst)
			}
			if n > 0 && !bytes.Equal(dst[:n], tt.Hash) {
				t.Fatalf("hash %x, want %x", dst[:n], tt.Hash)
			}
			if !tt.Text {
				if b := V2BytesError("info_hash_v2", len(tt.V)); b != got {
					t.Fatalf("V2BytesError: %q, V2Value: %q", b, got)
				}
			}
		})
	}
}
