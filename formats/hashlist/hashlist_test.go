package hashlist

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func TestParseLine(t *testing.T) {
	const hx = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name, in string
		ok       bool
		typ      int8
		wantErr  string
	}{
		{"hex", hx, true, schema.HashV1, ""},
		{"hex with spaces", "  " + hx + "\r", true, schema.HashV1, ""},
		{"blank", "   ", false, 0, ""},
		{"comment", "# list", false, 0, ""},
		{"magnet hex", "magnet:?xt=urn:btih:" + hx + "&dn=x", true, schema.HashV1, ""},
		{"magnet base32", "magnet:?xt=urn:btih:AERUKZ4JVPG66AJDIVTYTK6N54ASGRLH", true, schema.HashV1, ""},
		{"magnet v2", "magnet:?xt=urn:btmh:1220" + hx + "0123456789abcdef01234567", true, schema.HashV2, ""},
		{"magnet xt.1", "magnet:?xt.1=urn:btih:" + hx + "&dn=x", true, schema.HashV1, ""},
		{"magnet xt.1 and xt.2, hybrid", "magnet:?xt.1=urn:btih:" + hx + "&xt.2=urn:btmh:1220" + hx + "0123456789abcdef01234567", true, schema.HashV1, ""},
		{"magnet xt.1 v2 first", "magnet:?xt.1=urn:btmh:1220" + hx + "0123456789abcdef01234567&xt.2=urn:btih:" + hx, true, schema.HashV2, ""},
		{"magnet xt.x is no topic", "magnet:?xt.x=urn:btih:" + hx, false, 0, "without a urn:btih"},
		{"magnet xt. is no topic", "magnet:?xt.=urn:btih:" + hx, false, 0, "without a urn:btih"},
		{"magnet xtra is no topic", "magnet:?xtra=urn:btih:" + hx, false, 0, "without a urn:btih"},
		{"magnet xt.1 bad btih", "magnet:?xt.1=urn:btih:abc", false, 0, "want 40 hex"},
		// A btmh of another hash function than sha2-256, alone, and an
		// upper-case XT, said "without a urn:btih or urn:btmh xt parameter".
		{"magnet btmh sha1", "magnet:?xt=urn:btmh:1114" + hx, false, 0,
			"magnet btmh multihash 0x11 is not sha2-256 (0x12): a v2 infohash is sha2-256 (BEP 52)"},
		{"magnet btmh sha2-512", "magnet:?xt=urn:btmh:1340" + hx + hx + hx + hx[:8], false, 0,
			"magnet btmh multihash 0x13 is not sha2-256"},
		{"magnet btmh blake2b-256, a 2-byte code", "magnet:?xt=urn:btmh:a0e40220" + hx + hx[:24], false, 0,
			"magnet btmh multihash 0xb220 is not sha2-256"},
		{"magnet btmh sha2-256 of 16 bytes", "magnet:?xt=urn:btmh:1210" + hx[:32], false, 0,
			`magnet btmh "1210` + hx[:32] + `": want 64 hex characters after 1220`},
		{"magnet btmh not hex", "magnet:?xt=urn:btmh:zz", false, 0,
			`magnet btmh "zz": want a multihash in hex, 1220 and 64 hex characters`},
		{"magnet btmh empty", "magnet:?xt=urn:btmh:", false, 0, `magnet btmh "": want a multihash in hex`},
		{"magnet hybrid, btmh sha1 skipped", "magnet:?xt=urn:btih:" + hx + "&xt=urn:btmh:1114" + hx, true,
			schema.HashV1, ""},
		{"magnet XT", "magnet:?XT=urn:btih:" + hx, false, 0,
			`magnet URI parameter "XT" is not "xt": parameter names are case-sensitive (BEP 9)`},
		{"magnet Xt.1", "magnet:?dn=x&Xt.1=urn:btih:" + hx, false, 0, `magnet URI parameter "Xt.1" is not "xt"`},
		{"magnet XT beside xt", "magnet:?XT=urn:sha1:x&xt=urn:btih:" + hx, true, schema.HashV1, ""},
		{"magnet other urn", "magnet:?xt=urn:sha1:" + hx, false, 0, "without a urn:btih or urn:btmh xt parameter"},
		{"magnetico json", `{"infoHash":"` + hx + `","name":"x","files":[{"size":1,"path":"a"}]}`, true, schema.HashV1, ""},
		{"magnetico json no hash", `{"name":"x"}`, false, 0, "without \"infoHash\""},
		{"magnetico bad json", `{"infoHash":`, false, 0, "JSON line"},
		{"export jsonl", `{"info_hash":"` + hx + `","info_hash_v2":null,"name":"x"}`, true, schema.HashV1, ""},
		{"export jsonl v2", `{"info_hash":"` + hx + `","info_hash_v2":"` + hx + `0123456789abcdef01234567"}`, true, schema.HashV2, ""},
		{"bad hex", "zz" + hx[2:], false, 0, "invalid byte"},
		{"short", "abc", false, 0, "want 40 or 64"},
		{"magnet no xt", "magnet:?dn=x", false, 0, "without a urn:btih"},
		{"magnet bad btih", "magnet:?xt=urn:btih:abc", false, 0, "want 40 hex"},
		// 32 characters, but the padding leaves 19 bytes (or 18): not a hash.
		{"magnet padded base32", "magnet:?xt=urn:btih:AERUKZ4JVPG66AJDIVTYTK6N54ASGRL=", false, 0, "bad base32"},
		{"magnet padded base32 x3", "magnet:?xt=urn:btih:AERUKZ4JVPG66AJDIVTYTK6N54ASG===", false, 0, "bad base32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, typ, ok, err := ParseLine(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.ok || typ != tt.typ {
				t.Fatalf("got ok=%v typ=%d err=%v", ok, typ, err)
			}
			if ok && h[0] != 0x01 {
				t.Fatalf("hash %x", h)
			}
		})
	}
}

// FuzzParseLine: ParseLine and LineHashes agree on any line, a v2 hash's
// key is its first 20 bytes, and what anacrolix's magnet parser reads
// from a magnet URI both accept, LineHashes reads too
// (checkAnacrolixMagnet).
func FuzzParseLine(f *testing.F) {
	f.Add("0123456789abcdef0123456789abcdef01234567")
	f.Add("magnet:?xt=urn:btih:AERUKZ4JVPG66AJDIVTYTK6N54ASGRLH")
	f.Add("magnet:?xt=urn:btmh:1220zz")
	f.Add("magnet:?xt.1=urn:btih:0123456789abcdef0123456789abcdef01234567&xt.2=urn:btmh:1220zz")
	f.Add(`{"infoHash":"0123456789abcdef0123456789abcdef01234567","files":[]}`)
	f.Fuzz(func(t *testing.T, s string) {
		h, v2, typ, ok, err := ParseLine(s)
		if err != nil && ok {
			t.Fatal("error with ok")
		}
		if ok && typ == schema.HashV2 && (len(v2) != 32 || [20]byte(v2[:20]) != h) {
			t.Fatal("v2 hash not truncated from full bytes")
		}
		// LineHashes agrees: the same error, and ParseLine's hash first.
		hs, lerr := LineHashes(s)
		if (lerr != nil) != (err != nil) || (ok && (len(hs) == 0 || hs[0].H != h)) || (!ok && err == nil && len(hs) != 0) {
			t.Fatalf("LineHashes %v, %v; ParseLine %x, %v, %v", hs, lerr, h, ok, err)
		}
		for _, x := range hs {
			if x.Type == schema.HashV2 && (len(x.V2) != 32 || [20]byte(x.V2[:20]) != x.H) {
				t.Fatal("LineHashes: v2 hash not truncated from full bytes")
			}
		}
		if lerr == nil && len(hs) > 0 && strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "magnet:") {
			checkAnacrolixMagnet(t, s, hs)
		}
	})
}

// TestLineHashes: how many keys each kind of line names.
func TestLineHashes(t *testing.T) {
	const hx = "0123456789abcdef0123456789abcdef01234567"
	const v2 = "1220" + "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	for _, tc := range []struct {
		name, in string
		types    []int8
		wantErr  bool
	}{
		{"blank", "  ", nil, false},
		{"comment", "# x", nil, false},
		{"hex", hx, []int8{schema.HashV1}, false},
		{"magnet v1", "magnet:?xt=urn:btih:" + hx, []int8{schema.HashV1}, false},
		{"hybrid magnet", " MAGNET:?xt=urn:btih:" + hx + "&xt=urn:btmh:" + v2, []int8{schema.HashV1, schema.HashV2}, false},
		{"hybrid, numbered", "magnet:?xt.1=urn:btmh:" + v2 + "&xt.2=urn:btih:" + hx, []int8{schema.HashV2, schema.HashV1}, false},
		{"magnetico", `{"infoHash":"` + hx + `"}`, []int8{schema.HashV1}, false},
		{"bad", "zz", nil, true},
	} {
		hs, err := LineHashes(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		var types []int8
		for _, h := range hs {
			types = append(types, h.Type)
		}
		if !slices.Equal(types, tc.types) {
			t.Errorf("%s: types %v, want %v", tc.name, types, tc.types)
		}
	}
}

// TestBadLineCut: a bad line is a CutLineError, saying where the whole
// lines before it end, only when it is the list's last and no newline
// ends it; its message is any bad line's.
func TestBadLineCut(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		name  string
		in    string
		line  int64
		cut   bool
		whole int64
	}{
		{"last line cut", h + "\n" + h + "\nmagnet:?xt=urn:bt", 3, true, 82},
		{"last line cut after CRLF", h + "\r\n" + h[:7] + "\r", 2, true, 42},
		{"the only line cut", h[:13], 1, true, 0},
		{"after a byte order mark", "\xef\xbb\xbf" + h + "\n" + h[:3], 2, true, 44},
		{"last line bad, with its newline", h + "\nnot a hash\n", 2, false, 0},
		{"a bad line before the last", "not a hash\n" + h, 1, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := newScanner("in", strings.NewReader(tt.in), 1<<10)
			var err error
			for sc.Scan() && err == nil {
				if _, lerr := LineHashes(string(sc.Bytes())); lerr != nil {
					err = sc.BadLine(lerr)
				}
			}
			if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("in:%d: ", tt.line)) {
				t.Fatalf("err = %v, want one about line %d", err, tt.line)
			}
			ce, ok := AsCutLine(err)
			if ok != tt.cut {
				t.Fatalf("err = %v: cut %v, want %v", err, ok, tt.cut)
			}
			if ok && (*ce != CutLineError{Name: "in", Line: tt.line, Whole: tt.whole, Size: int64(len(tt.in)), Err: ce.Err} || ce.Err == nil) {
				t.Fatalf("%+v, want line %d after %d bytes of whole lines, of %d", *ce, tt.line, tt.whole, len(tt.in))
			}
		})
	}
}

// TestScannerLineLimit: a line that does not fit in the limit with its
// newline ends the scan with an error naming the list and the line, not
// bufio's "token too long"; the lines before it were read.
func TestScannerLineLimit(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef01234567"
	const max = 8 << 10 // over bufio.Scanner's first buffer (4096 bytes), which the limit cannot be under
	for _, tt := range []struct {
		name  string
		in    string
		lines int64  // lines read
		err   string // "" for none
	}{
		{"a line that fits", h + "\n" + strings.Repeat("a", max) + "\n", 2, ""},
		{"a last line that fits", h + "\n" + strings.Repeat("a", max), 2, ""},
		{"a line one byte over", h + "\n" + strings.Repeat("a", max+1) + "\n", 1, "in:2: line longer than 8192 bytes"},
		{"a last line one byte over", h + "\n" + strings.Repeat("a", max+1), 1, "in:2: line longer than 8192 bytes"},
		{"a magnetico line over", h + "\n" + h + "\n" + `{"infoHash":"` + h + `","name":"` + strings.Repeat("x", max) + `"}` + "\n", 2,
			"in:3: line longer than 8192 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := newScanner("in", strings.NewReader(tt.in), max)
			for sc.Scan() {
			}
			err := sc.Err()
			if sc.Line() != tt.lines || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Fatalf("%d lines, err %v; want %d, %q", sc.Line(), err, tt.lines, tt.err)
			}
		})
	}
}

// TestNewScannerLimit: NewScanner, which dedup and fetch use, bounds a
// line at MaxLine.
func TestNewScannerLimit(t *testing.T) {
	if sc := NewScanner("in", strings.NewReader("")); sc.max != MaxLine {
		t.Fatalf("NewScanner's limit is %d, want MaxLine (%d)", sc.max, MaxLine)
	}
}
