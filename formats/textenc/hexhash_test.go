package textenc

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"
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
// hex, where dedup and fetch refused both.
func TestHashValue(t *testing.T) {
	h := bytes.Repeat([]byte{0xab}, 32)
	hex20, hex32 := hex.EncodeToString(h[:20]), hex.EncodeToString(h)
	tests := []struct {
		name, typ, v string
		v2           bool
		want         int    // the hash's length; 0: refused with msg
		msg          string // "": as HexHashError says it
	}{
		{"text, 40 digits", "STRING", hex20, false, 20, ""},
		{"text, 40 upper-case digits", "utf8", strings.ToUpper(hex20), true, 20, ""},
		{"text, 64 digits", "STRING", hex32, true, 32, ""},
		{"text, 64 digits, no v2", "STRING", hex32, false, 0, `info_hash "` + hex32[:55] + `"... (a STRING column) is not ` + WantHexV1},
		{"text, 20 characters", "STRING", string(h[:20]), false, 0, `(a STRING column) is not ` + WantHexV1},
		{"text, 20 characters, v2", "utf8", "abcdefghij0123456789", true, 0,
			`info_hash "abcdefghij0123456789" (a utf8 column) is not ` + WantHexHash},
		{"bytes, 20", "", string(h[:20]), false, 20, ""},
		{"bytes, 32", "", string(h), true, 32, ""},
		{"bytes, 32, no v2", "", string(h), false, 0, "info_hash has 32 bytes, want 20"},
		{"bytes, 40 hex digits", "", hex20, true, 0, "info_hash has 40 bytes, want 20 (or 32 for v2)"},
		{"bytes, 40 hex digits, no v2", "", hex20, false, 0, "info_hash has 40 bytes, want 20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dst [32]byte
			n, msg := HashValue(&dst, "info_hash", tt.typ, tt.v, tt.v2)
			if nb, msgb := HashValue(&dst, "info_hash", tt.typ, []byte(tt.v), tt.v2); nb != n || msgb != msg {
				t.Fatalf("from bytes: %d %q; from a string: %d %q", nb, msgb, n, msg)
			}
			if n != tt.want || (n == 0) != (msg != "") || !strings.HasSuffix(msg, tt.msg) {
				t.Fatalf("got %d %q, want %d %q", n, msg, tt.want, tt.msg)
			}
			if n > 0 && !bytes.Equal(dst[:n], h[:n]) {
				t.Fatalf("hash %x, want %x", dst[:n], h[:n])
			}
		})
	}
}
