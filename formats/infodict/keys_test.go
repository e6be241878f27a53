package infodict

import (
	"errors"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/bencode"
)

// TestParseRepeatedKeys: a dictionary that repeats a key, at any level of
// the info dictionary, is invalid; unsorted keys are not, nor is a key
// that two different dictionaries hold.
func TestParseRepeatedKeys(t *testing.T) {
	tests := []struct {
		name string
		info string
		want string // "" for accepted, else the error's end
	}{
		{"name twice", "d6:lengthi1e4:name1:a4:name1:b12:piece lengthi1ee", `byte 0 repeats key "name"`},
		{"name twice, unsorted", "d4:name1:a6:lengthi1e4:name1:be", `byte 0 repeats key "name"`},
		{"name twice, far apart", "d4:name1:a6:lengthi1e12:piece lengthi1e4:name1:ae", `byte 0 repeats key "name"`},
		{"length twice in a file", "d5:filesld6:lengthi1e6:lengthi2e4:pathl1:aeee4:name1:de", `byte 9 repeats key "length"`},
		{"path twice in the second file", "d5:filesld6:lengthi1e4:pathl1:aeed4:pathl1:be6:lengthi2e4:pathl1:ceee4:name1:de",
			`byte 33 repeats key "path"`},
		{"in an unknown key's dictionary", "d6:lengthi1e4:name1:x5:otherd1:ki1e1:ki2eee", `byte 28 repeats key "k"`},
		{"in a dictionary in a list", "d6:lengthi1e4:name1:x5:otherlded1:ki1e1:ki2eeee", `byte 31 repeats key "k"`},
		{"empty key twice", "d0:i1e0:i2e6:lengthi1e4:name1:xe", `byte 0 repeats key ""`},
		{"file tree entry twice", "d9:file treed1:ad0:d6:lengthi5eee1:ad0:d6:lengthi6eeee4:name1:xe", `byte 12 repeats key "a"`},
		{"file length twice", "d9:file treed1:ad0:d6:lengthi5e6:lengthi6eeee4:name1:xe", `byte 19 repeats key "length"`},
		{"unsorted, no repeat", "d4:name1:x6:lengthi7e12:piece lengthi1ee", ""},
		{"unsorted file, no repeat", "d5:filesld4:pathl1:ae6:lengthi1eee4:name1:de", ""},
		{"same key in parent and child", "d6:lengthi1e4:name1:x5:otherd6:lengthi1e4:named4:namei1eeee", ""},
		{"same keys in sibling files", "d5:filesld6:lengthi1e4:pathl1:aeed6:lengthi2e4:pathl1:beee4:name1:de", ""},
		{"prefix keys", "d1:ai1e2:aai1e6:lengthi1e4:name1:x5:name2i1ee", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.info))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Parse(%q): %v, want it accepted", tt.info, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.HasSuffix(err.Error(), "dictionary at "+tt.want) {
				t.Fatalf("Parse(%q): %v, want ErrInvalid ending %q", tt.info, err, "dictionary at "+tt.want)
			}
		})
	}
}

// repeatsKey is uniqueKeys the plain way, a set of keys per dictionary,
// to check it against.
func repeatsKey(d *bencode.Decoder) (bool, error) {
	switch d.Peek() {
	case 'l':
		if err := d.List(); err != nil {
			return false, err
		}
		rep := false
		for !d.End() {
			r, err := repeatsKey(d)
			if err != nil {
				return false, err
			}
			rep = rep || r
		}
		return rep, nil
	case 'd':
		if err := d.Dict(); err != nil {
			return false, err
		}
		seen, rep := map[string]bool{}, false
		for !d.End() {
			k, err := d.String()
			if err != nil {
				return false, err
			}
			rep = rep || seen[string(k)]
			seen[string(k)] = true
			r, err := repeatsKey(d)
			if err != nil {
				return false, err
			}
			rep = rep || r
		}
		return rep, nil
	default:
		return false, d.Skip()
	}
}

// FuzzUniqueKeys checks uniqueKeys (one slice of keys, sorted only when
// they come unsorted) against repeatsKey on any well-formed bencode.
func FuzzUniqueKeys(f *testing.F) {
	for _, s := range []string{"d1:ai1e1:ai2ee", "d1:bi1e1:ai2ee", "d1:bi1e1:ai2e1:bi3ee", "ld1:ai1eed1:ai1eee",
		"d1:ad1:ai1ee1:bd1:ai1e1:ai1eee", "d1:ad1:bi1e1:ai1ee1:ai1ee", "d0:i1e1:ai1e0:i1ee"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := uniqueKeys(b)
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("%q: %v is not ErrInvalid", b, err)
		}
		rep, werr := repeatsKey(bencode.NewDecoder(b, bencode.Limits{MaxDepth: MaxDepth}))
		if werr == nil && rep != (err != nil) {
			t.Fatalf("%q: uniqueKeys says %v, a set per dictionary says repeated %v", b, err, rep)
		}
	})
}
