package schedule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/hashlist"
	"github.com/infohash/infohash/formats/schema"
)

func mustHash(t *testing.T, s string) schema.Hash {
	t.Helper()
	h, _, _, err := schema.ParseHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const (
	hexA  = "0123456789abcdef0123456789abcdef01234567"
	hexB  = "ffffffffffffffffffffffffffffffffffffffff"
	hexV2 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbbbbbbbbb"
	// base32A is hexA in base32, as a magnet's btih may write it.
	base32A = "AERUKZ4JVPG66AJDIVTYTK6N54ASGRLH"
)

func TestParseBlocklist(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // hex hashes expected in the set
		wantLen int
		wantErr string
	}{
		{name: "empty", in: "", wantLen: 0},
		{name: "one", in: hexA + "\n", want: []string{hexA}, wantLen: 1},
		{name: "comments and blanks", in: "# takedown list\n\n  " + hexA + "  # reason\r\n" + strings.ToUpper(hexB) + "\n#" + hexV2 + "\n",
			want: []string{hexA, hexB}, wantLen: 2},
		{name: "no final newline", in: hexA, want: []string{hexA}, wantLen: 1},
		{name: "duplicates", in: hexA + "\n" + hexA + "\n", want: []string{hexA}, wantLen: 1},
		{name: "v2 truncated", in: hexV2 + "\n", want: []string{hexV2[:40]}, wantLen: 1},
		{name: "short", in: hexA + "\n# ok\nabc\n", wantErr: "blocklist: F:3: infohash \"abc\": want 40 or 64 hex characters"},
		{name: "not hex", in: strings.Repeat("z", 40), wantErr: "blocklist: F:1: infohash"},
		{name: "two per line", in: hexA + " " + hexB, wantErr: "blocklist: F:1:"},
		{name: "long line", in: hexA + "\n" + strings.Repeat("a", hashlist.MaxLine+1) + "\n", wantErr: "blocklist: F:2: line longer than"},
		// The lines of dedup's hash lists.
		{name: "magnet btih hex", in: "magnet:?xt=urn:btih:" + strings.ToUpper(hexA) + "&dn=a%23b&tr=udp%3A%2F%2Ft%3A1\n", want: []string{hexA}, wantLen: 1},
		{name: "magnet btih base32", in: "magnet:?xt=urn:btih:" + base32A + "\n", want: []string{hexA}, wantLen: 1},
		{name: "magnet btmh", in: "  magnet:?xt=urn:btmh:1220" + hexV2 + "  # v2\n", want: []string{hexV2[:40]}, wantLen: 1},
		{name: "magnet hybrid", in: "magnet:?xt=urn:btih:" + hexB + "&xt=urn:btmh:1220" + hexV2 + "#frag\n", want: []string{hexB, hexV2[:40]}, wantLen: 2},
		{name: "magnet multi-topic", in: "MAGNET:?xt.1=urn:btih:" + hexA + "&xt.2=urn:btih:" + hexB + "\n", want: []string{hexA, hexB}, wantLen: 2},
		{name: "export jsonl", in: `{"info_hash":"` + hexV2[:40] + `","info_hash_v2":"` + hexV2 + `","name":"C# #1"}` + "\n", want: []string{hexV2[:40]}, wantLen: 1},
		{name: "magnetico jsonl", in: `{"infoHash":"` + hexA + `","name":"x"}` + "\n", want: []string{hexA}, wantLen: 1},
		{name: "byte order mark", in: "\xef\xbb\xbf" + hexA + "\n", want: []string{hexA}, wantLen: 1},
		{name: "magnet without topic", in: hexA + "\nmagnet:?dn=x&tr=y\n", wantErr: "blocklist: F:2: magnet URI without a urn:btih or urn:btmh xt parameter"},
		{name: "magnet bad btih", in: "magnet:?xt=urn:btih:abc\n", wantErr: "blocklist: F:1: magnet btih \"abc\": want 40 hex or 32 base32 characters"},
		{name: "magnet topic in fragment", in: "magnet:?dn=x#xt=urn:btih:" + hexA + "\n", wantErr: "blocklist: F:1: magnet URI without"},
		{name: "JSON without hash", in: `{"name":"x"}` + "\n", wantErr: "blocklist: F:1: JSON line without"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBlocklist(strings.NewReader(tt.in), "F")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Len() != tt.wantLen {
				t.Errorf("Len = %d, want %d", b.Len(), tt.wantLen)
			}
			for _, h := range tt.want {
				if !b.Contains(mustHash(t, h)) {
					t.Errorf("%s not in the list", h)
				}
			}
			if b.Contains(schema.Hash{}) {
				t.Errorf("the zero hash is in the list")
			}
		})
	}
}

func TestLoadBlocklist(t *testing.T) {
	dir := t.TempDir()
	b, err := LoadBlocklist(dir)
	if err != nil || b.Len() != 0 {
		t.Fatalf("missing blocklist = %d entries, %v; want empty", b.Len(), err)
	}
	path := filepath.Join(dir, BlocklistName)
	if err := os.WriteFile(path, []byte("# x\n"+hexA+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err = LoadBlocklist(dir); err != nil || !b.Contains(mustHash(t, hexA)) {
		t.Fatalf("LoadBlocklist = %d entries, %v", b.Len(), err)
	}
	if err := os.WriteFile(path, []byte("nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = LoadBlocklist(dir); err == nil || !strings.HasPrefix(err.Error(), "blocklist: "+path+":1: ") {
		t.Fatalf("error = %v, want it to name %s:1", err, path)
	}
}

// FuzzParseBlocklist checks that parsing never panics, that errors name
// the file and line, and that every accepted hash can be written back and
// parsed to the same set.
func FuzzParseBlocklist(f *testing.F) {
	f.Add("# c\n" + hexA + "\n\n" + hexB + " # why\n")
	f.Add(hexV2 + "\r\n")
	f.Add("abc\n")
	f.Add(strings.Repeat("0", 40) + "#" + strings.Repeat("1", 40))
	f.Add("magnet:?xt=urn:btih:" + base32A + "&xt=urn:btmh:1220" + hexV2 + "#x\n")
	f.Add(`{"info_hash":"` + hexA + `","name":"#"}` + "\n")
	f.Add("\xef\xbb\xbfmagnet:?xt.1=urn:btih:" + hexB + "\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		b, err := ParseBlocklist(strings.NewReader(in), "F")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "blocklist: F:") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q does not name the file and line on one line", err)
			}
			return
		}
		var sb strings.Builder
		for h := range b.set {
			sb.WriteString(schema.Hex(h) + "\n")
		}
		back, err := ParseBlocklist(strings.NewReader(sb.String()), "F")
		if err != nil || back.Len() != b.Len() {
			t.Fatalf("rewritten list: %d entries, %v; want %d", back.Len(), err, b.Len())
		}
		for h := range b.set {
			if !back.Contains(h) {
				t.Fatalf("%x lost in the rewrite", h)
			}
		}
	})
}
