package dedup

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/textenc/textenctest"
	"github.com/infohash/infohash/internal/exitcode"
)

// Two observations with an info_hash_v2 column, of text or bytes, in a
// required column, a dictionary-encoded one, or an optional one (where
// an empty value is written as null).
type (
	v2Text struct {
		InfoHash   string `parquet:"info_hash"`
		InfoHashV2 string `parquet:"info_hash_v2"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	v2TextDict struct {
		InfoHash   string `parquet:"info_hash"`
		InfoHashV2 string `parquet:"info_hash_v2,dict"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	v2TextNull struct {
		InfoHash   string `parquet:"info_hash"`
		InfoHashV2 string `parquet:"info_hash_v2,optional"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	v2Blob struct {
		InfoHash   []byte `parquet:"info_hash"`
		InfoHashV2 []byte `parquet:"info_hash_v2"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	v2BlobDict struct {
		InfoHash   []byte `parquet:"info_hash"`
		InfoHashV2 []byte `parquet:"info_hash_v2,dict"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	v2BlobNull struct {
		InfoHash   []byte `parquet:"info_hash"`
		InfoHashV2 []byte `parquet:"info_hash_v2,optional"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
)

// writeV2Rows writes rows to p as Parquet or as an Arrow stream.
func writeV2Rows[T any](t *testing.T, format, p string, rows []T) {
	t.Helper()
	if format == "parquet" {
		writeRows(t, p, rows)
		return
	}
	var s bytes.Buffer
	w := rowio.NewArrowWriter[T]("in", &s)
	err := w.Write(rows)
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = os.WriteFile(p, s.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestV2LengthsEveryReader: every reader of an info_hash_v2 holds to the
// one rule (textenc.V2Value, V2BytesError): the values of
// textenctest.V2LengthCases (0 to 64 bytes or hex digits) in row 2 after
// a good row, from a Parquet file (STRING or BLOB; a plain, a dictionary
// or an optional column) and an Arrow stream (utf8 or binary; a
// non-nullable or a nullable column), each through the column reader and
// the row reader, give the table's verdict: the row's full v2 hash, none,
// or the same refusal in row 2, exit 2.
func TestV2LengthsEveryReader(t *testing.T) {
	at := t0.UnixMilli()
	good, goodV2 := bytes.Repeat([]byte{0x11}, 20), bytes.Repeat([]byte{0x11}, 32) // row 1's hashes
	for _, tt := range textenctest.V2LengthCases() {
		// Row 2's info_hash: the first 20 bytes (40 digits) of its
		// info_hash_v2 when that is a hash.
		hash := []byte(strings.Repeat("ab", 10))
		if tt.Text {
			hash, _ = hex.DecodeString(strings.Repeat("ab", 20))
		}
		for _, layout := range []string{"parquet", "parquet dictionary", "parquet optional", "arrow", "arrow nullable"} {
			typ := "STRING"
			if strings.HasPrefix(layout, "arrow") {
				typ = "utf8"
			}
			_, msg := tt.Verdict(typ)
			eachParquetReader(t, tt.Name+"/"+layout, func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "in")
				format := strings.Fields(layout)[0]
				h, h2, v := hex.EncodeToString(good), hex.EncodeToString(goodV2), hex.EncodeToString(hash)
				switch {
				case tt.Text && strings.HasSuffix(layout, "dictionary"):
					writeV2Rows(t, format, p, []v2TextDict{{h, h2, at}, {v, tt.V, at}})
				case tt.Text && strings.Contains(layout, " "):
					writeV2Rows(t, format, p, []v2TextNull{{h, h2, at}, {v, tt.V, at}})
				case tt.Text:
					writeV2Rows(t, format, p, []v2Text{{h, h2, at}, {v, tt.V, at}})
				case strings.HasSuffix(layout, "dictionary"):
					writeV2Rows(t, format, p, []v2BlobDict{{good, goodV2, at}, {hash, []byte(tt.V), at}})
				case strings.Contains(layout, " "):
					writeV2Rows(t, format, p, []v2BlobNull{{good, goodV2, at}, {hash, []byte(tt.V), at}})
				default:
					writeV2Rows(t, format, p, []v2Blob{{good, goodV2, at}, {hash, []byte(tt.V), at}})
				}
				in, err := probe(p, "in", "")
				if err != nil {
					t.Fatal(err)
				}
				b := newBatch(3600_000)
				defer b.release()
				_, err = readInput(context.Background(), in, at, b)
				if msg != "" {
					wantErr := "dedup: in: row 2: " + msg
					if err == nil || !strings.Contains(err.Error(), wantErr) || exitcode.Of(err) != exitcode.Usage {
						t.Fatalf("err = %v (exit %d)\nwant ...%s (exit 2)", err, exitcode.Of(err), wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("err = %v, want row 2 read", err)
				}
				// describe's line of a hash ends with its full v2 hash, if any.
				got, line := describe(b), ""
				for _, l := range strings.Split(got, "\n") {
					if strings.HasPrefix(l, hex.EncodeToString(hash)) {
						line = l
					}
				}
				if !strings.Contains(got, hex.EncodeToString(goodV2)) || !strings.Contains(got, "2 observations") ||
					line == "" || !strings.HasSuffix(line, " "+hex.EncodeToString(tt.Hash)) {
					t.Fatalf("read:\n%.800s\nwant row 2's line to end with %q", got, " "+hex.EncodeToString(tt.Hash))
				}
			})
		}
	}
}
