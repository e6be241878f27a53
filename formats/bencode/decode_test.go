package bencode

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/bencode"
)

// krpcLike are the caps formats/krpc sets, to test the limits at their
// edges.
var krpcLike = Limits{MaxDepth: 10, MaxValues: 1000, MaxIntDigits: 18, MaxStringLen: 9_999_999}

func nest(open string, n int) string {
	return strings.Repeat(open, n) + "i1e" + strings.Repeat("e", n)
}

func TestSkip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		lim  Limits
		want int // -1: an error
	}{
		{"int", "i42e", Limits{}, 4},
		{"negative int", "i-7e", Limits{}, 4},
		{"zero", "i0e", Limits{}, 3},
		{"negative zero", "i-0e", Limits{}, -1},
		{"leading zero", "i03e", Limits{}, -1},
		{"negative leading zero", "i-03e", Limits{}, -1},
		{"plus sign", "i+1e", Limits{}, -1},
		{"empty int", "ie", Limits{}, -1},
		{"sign only", "i-e", Limits{}, -1},
		{"unterminated int", "i12", Limits{}, -1},
		{"max int64", "i9223372036854775807e", Limits{}, 21},
		{"int64 overflow", "i9223372036854775808e", Limits{}, -1},
		{"min int64 refused", "i-9223372036854775808e", Limits{}, -1},
		{"20 digits", "i10000000000000000000e", Limits{}, -1},
		{"18 digits within krpc's cap", "i999999999999999999e", krpcLike, 20},
		{"19 digits over krpc's cap", "i1000000000000000000e", krpcLike, -1},
		{"string", "3:abcXYZ", Limits{}, 5},
		{"empty string", "0:", Limits{}, 2},
		{"string past end", "5:abc", Limits{}, -1},
		{"huge string length", "99999999999999999999999:a", Limits{}, -1},
		{"length 2^64+1, not 1", "18446744073709551617:a", Limits{}, -1},
		{"length 2^64, not 0", "18446744073709551616:", Limits{}, -1},
		{"length 2^32+1, not 1 where int has 32 bits", "4294967297:a", Limits{}, -1},
		{"string length leading zero", "03:abc", Limits{}, -1},
		{"string length 00", "00:", Limits{}, -1},
		{"negative string length", "-1:a", Limits{}, -1},
		{"no colon", "3abc", Limits{}, -1},
		{"string at MaxStringLen", "3:abc", Limits{MaxStringLen: 3}, 5},
		{"string over MaxStringLen", "4:abcd", Limits{MaxStringLen: 3}, -1},
		{"list", "li1e3:abce", Limits{}, 10},
		{"empty list", "le", Limits{}, 2},
		{"dict", "d1:ai1e1:bli2eee", Limits{}, 16},
		{"empty dict", "de", Limits{}, 2},
		{"unsorted keys allowed", "d1:bi1e1:ai2ee", Limits{}, 14},
		{"duplicate keys allowed", "d1:ai1e1:ai2ee", Limits{}, 14},
		{"dict int key", "di1ei2ee", Limits{}, -1},
		{"dict list key", "dle1:ae", Limits{}, -1},
		{"dict key without value", "d1:ae", Limits{}, -1},
		{"nested dict value then key", "d1:ad1:bi1ee1:ci2ee", Limits{}, 19},
		{"trailing bytes not read", "i1eXYZ", Limits{}, 3},
		{"stray e", "e", Limits{}, -1},
		{"truncated list", "li1e", Limits{}, -1},
		{"truncated dict", "d1:a", Limits{}, -1},
		{"bad byte", "x", Limits{}, -1},
		{"empty", "", Limits{}, -1},
		{"depth at MaxDepth", nest("l", 4), Limits{MaxDepth: 4}, 11},
		{"depth over MaxDepth", nest("l", 5), Limits{MaxDepth: 4}, -1},
		{"dict depth over MaxDepth", nest("d1:k", 5), Limits{MaxDepth: 4}, -1},
		{"depth 64 by default", nest("l", 64), Limits{}, 131},
		{"depth 65 refused", nest("l", 65), Limits{}, -1},
		{"MaxDepth over 64 means 64", nest("l", 65), Limits{MaxDepth: 100}, -1},
		{"values at MaxValues", "li1e1:ae", Limits{MaxValues: 2}, 8},
		{"values over MaxValues", "li1e1:ai2ee", Limits{MaxValues: 2}, -1},
		{"keys are values", "d1:ai1ee", Limits{MaxValues: 1}, -1},
		{"containers are not values", "llelelelee", Limits{MaxValues: 1}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder([]byte(tt.in), tt.lim)
			err := d.Skip()
			if tt.want < 0 {
				if !IsSyntax(err) {
					t.Fatalf("Skip(%q) = %v at %d, want a SyntaxError", tt.in, err, d.Offset())
				}
				return
			}
			if err != nil || d.Offset() != tt.want {
				t.Fatalf("Skip(%q) = %v at %d, want %d", tt.in, err, d.Offset(), tt.want)
			}
		})
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"i0e", 0, false},
		{"i-1e", -1, false},
		{"i9223372036854775807e", 9223372036854775807, false},
		{"i-9223372036854775807e", -9223372036854775807, false},
		{"1:a", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NewDecoder([]byte(tt.in), Limits{}).Int()
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("Int(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestPullWalk reads a dictionary the way krpc does: known keys by type,
// the rest skipped.
func TestPullWalk(t *testing.T) {
	in := []byte("d1:ad2:id3:abc1:xlleee1:tli1ei2ee1:xi5ee")
	d := NewDecoder(in, Limits{})
	if err := d.Dict(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for !d.End() {
		k, err := d.String()
		if err != nil {
			t.Fatal(err)
		}
		switch string(k) {
		case "a":
			if err := d.Dict(); err != nil {
				t.Fatal(err)
			}
			for !d.End() {
				k, err := d.String()
				if err == nil {
					err = d.Skip()
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, "a."+string(k))
			}
		case "t":
			if err := d.List(); err != nil {
				t.Fatal(err)
			}
			for !d.End() {
				v, err := d.Int()
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, "t."+strconv.FormatInt(v, 10))
			}
		default:
			if err := d.Skip(); err != nil {
				t.Fatal(err)
			}
			got = append(got, string(k))
		}
	}
	if want := "a.id a.x t.1 t.2 x"; strings.Join(got, " ") != want || d.Offset() != len(in) || d.depth != 0 {
		t.Fatalf("read %q to %d at depth %d, want %q to %d at depth 0", got, d.Offset(), d.depth, want, len(in))
	}
}

// TestDepthAcrossCalls checks that the containers Dict and List opened
// count toward the depth of what Skip reads inside them, and that End
// gives their levels back.
func TestDepthAcrossCalls(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		opened int // Dict calls before Skip
		closed int // End calls after the first Skip, before a second one
		ok     bool
	}{
		{"two open, two inside", "dd1:xllee", 2, 0, true},
		{"two open, three inside", "dd1:xlllee", 2, 0, false},
		{"one closed, three inside", "dd1:xlleee1:yllleeee", 2, 1, true},
		{"one closed, four inside", "dd1:xlleee1:ylllleeeee", 2, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder([]byte(tt.in), Limits{MaxDepth: 4})
			for range tt.opened {
				if err := d.Dict(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := d.String(); err != nil {
				t.Fatal(err)
			}
			err := d.Skip()
			if tt.closed > 0 && err == nil {
				for range tt.closed {
					if !d.End() {
						t.Fatalf("no end at %d", d.Offset())
					}
				}
				if _, err = d.String(); err == nil {
					err = d.Skip()
				}
			}
			if (err == nil) != tt.ok {
				t.Fatalf("%q: %v, want ok %v", tt.in, err, tt.ok)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		read   func(d *Decoder) error
		offset int
	}{
		{"not a dict", "li1ee", (*Decoder).Dict, 0},
		{"not a list", "de", (*Decoder).List, 0},
		{"bad int inside", "li1ei01ee", (*Decoder).Skip, 4},
		{"unterminated", "d1:ai1e", (*Decoder).Skip, 7},
		{"too deep", "llle", func(d *Decoder) error { d.lim.MaxDepth = 2; return d.Skip() }, 2},
		{"string past end", "li1e9:abce", (*Decoder).Skip, 4},
		{"string in a dict", "d1:ai1e", func(d *Decoder) error {
			if err := d.Dict(); err != nil {
				return err
			}
			d.End()
			if _, err := d.String(); err != nil {
				return err
			}
			_, err := d.String()
			return err
		}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read(NewDecoder([]byte(tt.in), Limits{}))
			se, ok := err.(*SyntaxError)
			if !ok || se.Offset != tt.offset {
				t.Fatalf("%q: %v, want a SyntaxError at byte %d", tt.in, err, tt.offset)
			}
			if !strings.HasPrefix(se.Error(), "byte "+strconv.Itoa(tt.offset)+": ") {
				t.Fatalf("message %q", se.Error())
			}
		})
	}
}

// echo re-encodes the value at d's position through Dict, List, End,
// String and Int, writing with an Encoder: a second reader of the grammar,
// to check Skip with, and a check that the Encoder writes back what the
// Decoder read.
func echo(d *Decoder, e *Encoder) error {
	var c byte
	if d.pos < len(d.b) {
		c = d.b[d.pos]
	}
	switch c {
	case 'i':
		v, err := d.Int()
		e.Int(v)
		return err
	case 'd', 'l':
		var err error
		if c == 'd' {
			err = d.Dict()
			e.Dict()
		} else {
			err = d.List()
			e.List()
		}
		for err == nil && !d.End() {
			if c == 'd' {
				var k []byte
				k, err = d.String()
				e.Bytes(k)
			}
			if err == nil {
				err = echo(d, e)
			}
		}
		e.End()
		return err
	default:
		s, err := d.String()
		e.Bytes(s)
		return err
	}
}

// FuzzDecoder checks, on any input, that Skip never panics and agrees with
// a walk through the other methods (what they accept, and where it ends);
// that what is accepted re-encodes with the Encoder to the same bytes
// (canonical integers and lengths) and decodes with anacrolix's decoder
// (which also wants sorted keys); and that krpc's tighter caps only ever
// refuse more.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{"i42e", "3:abc", "d1:ai1e1:bli2eee", "le", "d1:md11:ut_metadatai1eee", "i-0e",
		nest("l", 11), "i1000000000000000000e", "d1:Xi0e1:0i0ee",
		"d1:0d2:x020:000000000000000000004:00001:0e1:q13:00000000000001:t2:001:y1:qe"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		loose := NewDecoder(b, Limits{})
		err := loose.Skip()
		walk := NewDecoder(b, Limits{})
		var out Encoder
		werr := echo(walk, &out)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: Skip says %v, the walk %v", b, err, werr)
		}
		if err != nil {
			if !IsSyntax(err) {
				t.Fatalf("%q: %v is no SyntaxError", b, err)
			}
		} else {
			n := loose.Offset()
			if walk.Offset() != n || !bytes.Equal(out.B, b[:n]) {
				t.Fatalf("%q: Skip read %d bytes, the walk %d as %q", b, n, walk.Offset(), out.B)
			}
			var v any
			if err := bencode.Unmarshal(b[:n], &v); err != nil && !strings.Contains(err.Error(), "dict keys unsorted") {
				t.Fatalf("accepted %q but anacrolix says %v", b[:n], err)
			}
		}
		tight := NewDecoder(b, krpcLike)
		if terr := tight.Skip(); terr == nil && (err != nil || tight.Offset() != loose.Offset()) {
			t.Fatalf("%q: krpc's caps accept what no caps refuse (%v)", b, err)
		}
	})
}

func TestPeek(t *testing.T) {
	d := NewDecoder([]byte("li7ee"), Limits{})
	var got []byte
	for {
		c := d.Peek()
		got = append(got, c)
		if c == 0 {
			break
		}
		switch c {
		case 'l':
			if err := d.List(); err != nil {
				t.Fatal(err)
			}
		case 'e':
			d.End()
		default:
			if err := d.Skip(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if string(got) != "lie\x00" {
		t.Fatalf("peeked %q, want %q", got, "lie\x00")
	}
}
