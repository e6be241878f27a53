package dedup

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestInfoHashTextRule: dedup reads an info_hash by the rule fetch and
// merge read one by (textenc.HashValue), in every reader (Parquet's and
// Arrow's column and row readers): text (VARCHAR, utf8) is hex, 40
// digits or 64, bytes (BLOB, binary) the hash's 20 or 32 bytes, never the
// other way: 20 characters of text and 40 bytes of a BLOB are bad input
// naming the row, exit 2.
func TestInfoHashTextRule(t *testing.T) {
	type textObs struct {
		InfoHash   string `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	type blobObs struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	h := bytes.Repeat([]byte{0x5d}, 20)
	at := t0.UnixMilli()
	write := func(t *testing.T, dir, format string, rows any) string {
		t.Helper()
		if format == "parquet" {
			switch r := rows.(type) {
			case []textObs:
				return writeRows(t, filepath.Join(dir, "in.parquet"), r)
			case []blobObs:
				return writeRows(t, filepath.Join(dir, "in.parquet"), r)
			}
		}
		var s bytes.Buffer
		var err error
		switch r := rows.(type) {
		case []textObs:
			w := rowio.NewArrowWriter[textObs]("in", &s)
			if err = w.Write(r); err == nil {
				err = w.Close()
			}
		case []blobObs:
			w := rowio.NewArrowWriter[blobObs]("in", &s)
			if err = w.Write(r); err == nil {
				err = w.Close()
			}
		}
		p := filepath.Join(dir, "in.arrows")
		if err == nil {
			err = os.WriteFile(p, s.Bytes(), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name string
		rows any    // two observations: a good one, then the case's
		want string // the error after "row 2: " (%s: the column's type), "" for none
	}{
		{"text, 40 hex digits", []textObs{{hex.EncodeToString(h), at}, {strings.ToUpper(hex.EncodeToString(h)), at}}, ""},
		{"text, 20 characters", []textObs{{hex.EncodeToString(h), at}, {"abcdefghij0123456789", at}},
			`info_hash "abcdefghij0123456789" (a %s column) is not a hex infohash (40 or 64 digits)`},
		{"bytes, 20", []blobObs{{h, at}, {h, at}}, ""},
		{"bytes, 40 hex digits", []blobObs{{h, at}, {[]byte(hex.EncodeToString(h)), at}},
			"info_hash has 40 bytes, want 20 (or 32 for v2)"},
	} {
		for _, format := range []string{"parquet", "arrow"} {
			eachParquetReader(t, tt.name+"/"+format, func(t *testing.T) {
				in := write(t, t.TempDir(), format, tt.rows)
				data := filepath.Join(t.TempDir(), "ds")
				_, err := run(t, data, nil, in)
				if tt.want == "" {
					if err != nil {
						t.Fatal(err)
					}
					if st := readState(t, data); len(st) != 1 || st[schema.Hash(h)].SeenCount != 2 {
						t.Fatalf("state %+v, want hash %x seen twice", st, h)
					}
					return
				}
				want := "row 2: " + strings.Replace(tt.want, "%s", map[string]string{"parquet": "STRING", "arrow": "utf8"}[format], 1)
				if err == nil || !strings.HasPrefix(err.Error(), "dedup: "+in+": ") || !strings.Contains(err.Error(), want) ||
					exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err = %v (exit %d)\nwant dedup: %s: ...%s (exit 2)", err, exitcode.Of(err), in, want)
				}
			})
		}
	}
}
