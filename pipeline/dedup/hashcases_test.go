package dedup

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/textenc"
	"github.com/infohash/infohash/formats/textenc/textenctest"
)

// TestColumnReaderHashValue: the Parquet column reader, which checks an
// info_hash page by page, reads every value of textenc.HashValue's cases
// as HashValue does where a v2 hash may stand (dedup keys one by its
// first 20 bytes): the same hash, or the same refusal, in row 2, from a
// BLOB or a STRING column, plain or dictionary-encoded.
func TestColumnReaderHashValue(t *testing.T) {
	type blobObs struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	type blobDict struct {
		InfoHash   []byte `parquet:"info_hash,dict"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	type textObs struct {
		InfoHash   string `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	type textDict struct {
		InfoHash   string `parquet:"info_hash,dict"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	at := t0.UnixMilli()
	good := bytes.Repeat([]byte{0x11}, 20) // row 1's
	for _, tt := range textenctest.HashCases() {
		typ := ""
		if tt.Typ != "" {
			typ = "STRING" // parquet-go's string type
		}
		var h [32]byte
		want, msg := textenc.HashValue(&h, "info_hash", typ, tt.V, true)
		for _, dict := range []bool{false, true} {
			t.Run(tt.Name+map[bool]string{false: "/plain", true: "/dictionary"}[dict], func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "in.parquet")
				switch {
				case typ == "" && !dict:
					writeRows(t, p, []blobObs{{good, at}, {[]byte(tt.V), at}})
				case typ == "":
					writeRows(t, p, []blobDict{{good, at}, {[]byte(tt.V), at}})
				case !dict:
					writeRows(t, p, []textObs{{hex.EncodeToString(good), at}, {tt.V, at}})
				default:
					writeRows(t, p, []textDict{{hex.EncodeToString(good), at}, {tt.V, at}})
				}
				in, err := probe(p, "in", "")
				if err != nil {
					t.Fatal(err)
				}
				b := newBatch(3600_000)
				defer b.release()
				f, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				pf, err := parquet.OpenFile(f, in.size)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := fastLayout(pf); !ok || !fastPath {
					t.Fatal("not the column reader's layout")
				}
				_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
				if want == 0 {
					if err == nil || !strings.HasSuffix(err.Error(), "dedup: in: row 2: "+msg) {
						t.Fatalf("err = %v, want HashValue's refusal in row 2: %s", err, msg)
					}
					return
				}
				if err != nil {
					t.Fatalf("err = %v, want hash %x read", err, h[:want])
				}
				if got := describe(b); !strings.Contains(got, hex.EncodeToString(h[:20])) ||
					(want == 32) != strings.Contains(got, hex.EncodeToString(h[:32])) {
					t.Fatalf("read:\n%.800s\nwant hash %x", got, h[:want])
				}
			})
		}
	}
}
