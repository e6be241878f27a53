package dedup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/hashlist"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestReadHashList reads a list through the 40-digit fast path and the
// general parser: each line gives the hash hashlist.ParseLine gives, and a bad
// 40-character line is an error naming its line.
func TestReadHashList(t *testing.T) {
	const hx = "0123456789abcdef0123456789ABCDEF01234567"
	want, _, _, _, _ := hashlist.ParseLine(hx)
	cases := []struct {
		name, list string
		hashes     int
		err        string
	}{
		{"plain", hx + "\n" + hx + "\n", 2, ""},
		{"mixed", hx + "\n\n  " + hx + " \r\n# note\nmagnet:?xt=urn:btih:" + hx + "\n", 3, ""},
		{"no final newline", hx, 1, ""},
		{"bad 40-character line", hx + "\n" + "zz" + hx[2:] + "\n", 1, "l.txt:2: infohash"},
		{"bad short line", hx + "\n\nabc\n", 1, "l.txt:3: infohash"},
		{"byte order mark", "\ufeff" + hx + "\n" + hx + "\n", 2, ""},
		{"byte order mark before JSON", "\ufeff{\"infoHash\":\"" + hx + "\"}\n", 1, ""},
		{"byte order mark on a later line", hx + "\n\ufeff" + hx + "\n", 1, "l.txt:2: infohash"},
		{"magnetico line of 3000 files", magneticoLine(hx, 3000) + "\n" + hx + "\n", 2, ""},
		{"btmh of sha1", hx + "\nmagnet:?xt=urn:btmh:1114" + hx + "\n", 1,
			"l.txt:2: magnet btmh multihash 0x11 is not sha2-256 (0x12)"},
		{"upper-case XT", hx + "\n" + hx + "\nmagnet:?XT=urn:btih:" + hx + "\n", 2,
			`l.txt:3: magnet URI parameter "XT" is not "xt"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []schema.Observation
			n, err := readHashList("l.txt", strings.NewReader(c.list), 42, func(o schema.Observation) { got = append(got, o) })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if int(n) != c.hashes || len(got) != c.hashes {
				t.Fatalf("%d hashes (%d emitted), want %d", n, len(got), c.hashes)
			}
			for _, o := range got {
				if o.InfoHash != want || o.HashType != schema.HashV1 || o.ObservedAt != 42 || o.Source != schema.SourceImport {
					t.Fatalf("observation %+v", o)
				}
			}
		})
	}
}

// magneticoLine is a magnetico export's line for a torrent of files files.
func magneticoLine(hash string, files int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, `{"infoHash":%q,"name":"many files","files":[`, hash)
	for i := range files {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"size":%d,"path":"folder/subfolder/a rather long file name number %d.bin"}`, i*1000, i)
	}
	sb.WriteString("]}")
	return sb.String()
}

// TestHybridMagnet: a hybrid torrent's magnet (urn:btih and urn:btmh)
// names two DHT keys, and both are read; a key named twice is read once.
func TestHybridMagnet(t *testing.T) {
	const v1 = "0123456789abcdef0123456789abcdef01234567"
	const v2 = "c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
	cases := []struct {
		name, line string
		want       []string // hex of the 20-byte keys, in order
		v2         bool     // the second is v2
	}{
		{"hybrid", "magnet:?xt=urn:btih:" + v1 + "&xt=urn:btmh:1220" + v2 + "&dn=x", []string{v1, v2[:40]}, true},
		{"hybrid, v2 first", "magnet:?xt=urn:btmh:1220" + v2 + "&xt=urn:btih:" + v1, []string{v2[:40], v1}, false},
		{"the same key twice", "magnet:?xt=urn:btih:" + v1 + "&xt=urn:btih:" + strings.ToUpper(v1), []string{v1}, false},
		// BEP 9's multi-topic form numbers the xt parameters.
		{"hybrid, xt.1 and xt.2", "magnet:?xt.1=urn:btih:" + v1 + "&xt.2=urn:btmh:1220" + v2 + "&dn=x", []string{v1, v2[:40]}, true},
		{"hybrid, xt.2 before xt.1", "magnet:?xt.2=urn:btih:" + v1 + "&xt.1=urn:btmh:1220" + v2, []string{v1, v2[:40]}, true},
		{"xt and xt.1", "magnet:?xt=urn:btih:" + v1 + "&xt.1=urn:btmh:1220" + v2, []string{v1, v2[:40]}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []schema.Observation
			n, err := readHashList("l.txt", strings.NewReader(c.line+"\n"), 42, func(o schema.Observation) { got = append(got, o) })
			if err != nil {
				t.Fatal(err)
			}
			if int(n) != len(c.want) || len(got) != len(c.want) {
				t.Fatalf("%d observations (%d emitted), want %d", n, len(got), len(c.want))
			}
			for i, w := range c.want {
				if schema.Hex(got[i].InfoHash) != w {
					t.Fatalf("key %d is %s, want %s", i, schema.Hex(got[i].InfoHash), w)
				}
			}
			if c.v2 && (got[1].HashType != schema.HashV2 || len(got[1].InfoHashV2) != 32) {
				t.Fatalf("second key %+v, want v2 with its full hash", got[1])
			}
		})
	}
}

// TestCSVHeaderInput: export --format csv's output given to dedup is bad
// input (exit 2) whose error says its first line looks like a CSV header
// and what dedup reads, not that the 261-character line is no infohash.
func TestCSVHeaderInput(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "state.csv")
	if err := os.WriteFile(csv, []byte("info_hash,info_hash_v2,hash_type\n0123456789abcdef0123456789abcdef01234567,,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, filepath.Join(dir, "ds"), nil, csv)
	want := csv + `:1: "info_hash,info_hash_v2,hash_type" looks like a CSV header: dedup reads Parquet, Arrow, or ` +
		"a list of one infohash or magnet URI a line (export --format csv output is not an input)"
	if err == nil || !strings.Contains(err.Error(), want) || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("got %v (exit %d), want bad input saying %q", err, exitcode.Of(err), want)
	}
}
