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

// TestHashLengthsEveryReader: every reader of an info_hash holds to the
// one rule (textenc.HashValue, HashBytesError), a v2 hash allowed as
// dedup keys one: the values of textenctest.LengthCases (19 to 64 bytes
// or hex digits) in row 2 after a good row, from a Parquet file (STRING
// or BLOB) and an Arrow stream (utf8 or binary), each through the column
// reader and the row reader, and a hash list for text, give the table's
// verdict: the same hash read, or the same refusal in row 2 (a hash
// list's in its own words, naming line 2), exit 2.
func TestHashLengthsEveryReader(t *testing.T) {
	type textObs struct {
		InfoHash   string `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	type blobObs struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	at := t0.UnixMilli()
	good := bytes.Repeat([]byte{0x11}, 20) // row 1's hash
	arrowFile := func(t *testing.T, p string, write func(*bytes.Buffer) error) string {
		t.Helper()
		var s bytes.Buffer
		if err := write(&s); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, s.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range textenctest.LengthCases() {
		formats := []string{"parquet", "arrow"}
		if tt.Text {
			formats = append(formats, "hash list")
		}
		for _, format := range formats {
			typ := map[string]string{"parquet": "STRING", "arrow": "utf8"}[format]
			want, msg := tt.Verdict(true, typ)
			each := eachParquetReader
			if format == "hash list" { // one reader
				each = func(t *testing.T, name string, f func(*testing.T)) { t.Run(name, f) }
			}
			each(t, tt.Name+"/"+format, func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "in")
				switch {
				case format == "hash list":
					if err := os.WriteFile(p, []byte(hex.EncodeToString(good)+"\n"+tt.V+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				case format == "parquet" && tt.Text:
					writeRows(t, p, []textObs{{hex.EncodeToString(good), at}, {tt.V, at}})
				case format == "parquet":
					writeRows(t, p, []blobObs{{good, at}, {[]byte(tt.V), at}})
				case tt.Text:
					arrowFile(t, p, func(s *bytes.Buffer) error {
						w := rowio.NewArrowWriter[textObs]("in", s)
						if err := w.Write([]textObs{{hex.EncodeToString(good), at}, {tt.V, at}}); err != nil {
							return err
						}
						return w.Close()
					})
				default:
					arrowFile(t, p, func(s *bytes.Buffer) error {
						w := rowio.NewArrowWriter[blobObs]("in", s)
						if err := w.Write([]blobObs{{good, at}, {[]byte(tt.V), at}}); err != nil {
							return err
						}
						return w.Close()
					})
				}
				in, err := probe(p, "in", "")
				if err != nil {
					t.Fatal(err)
				}
				b := newBatch(3600_000)
				defer b.release()
				_, err = readInput(context.Background(), in, at, b)
				if want == 0 {
					wantErr := "dedup: in: row 2: " + msg
					if format == "hash list" {
						wantErr = `dedup: in:2: infohash "` + tt.V + `": want 40 or 64 hex characters` // its own words
					}
					if err == nil || !strings.Contains(err.Error(), wantErr) || exitcode.Of(err) != exitcode.Usage {
						t.Fatalf("err = %v (exit %d)\nwant ...%s (exit 2)", err, exitcode.Of(err), wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("err = %v, want hash %x read", err, tt.Hash)
				}
				got := describe(b)
				if !strings.Contains(got, hex.EncodeToString(tt.Hash[:20])) || !strings.Contains(got, "2 observations") ||
					want == 32 && !strings.Contains(got, hex.EncodeToString(tt.Hash[:32])) {
					t.Fatalf("read:\n%.800s\nwant hash %x", got, tt.Hash)
				}
			})
		}
	}
}
