package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// offsetRow has a column of each kind with value offsets; the rows of
// offsetRows give each offsets buffer a distinct content, which the test
// finds in the stream and rewrites.
type offsetRow struct {
	Name string   `parquet:"name"`
	Raw  []byte   `parquet:"raw"`
	Tags []string `parquet:"tags,list"`
}

var offsetRows = []offsetRow{
	{Name: "abc", Raw: []byte("ab"), Tags: []string{"tag-01"}},
	{Name: "abcde", Raw: []byte("abcdefghi"), Tags: []string{"tag-02", "tag-03"}},
	{Name: "abcdefg", Raw: []byte("abcd"), Tags: []string{"tag-04", "tag-05", "tag-06"}},
}

// int32s is the little-endian bytes of vs, as an Arrow offsets buffer.
func int32s(vs ...int32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// TestArrowOffsets: a stream whose value offsets decrease, start below 0
// or end past what they index is a CorruptError naming the column (and
// the stream), read by rows or by record batches, not a panic inside
// arrow reported as a failed decoder.
func TestArrowOffsets(t *testing.T) {
	var good bytes.Buffer
	w := NewArrowWriter[offsetRow]("seed", &good)
	if err := w.Write(offsetRows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		from, to  []byte
		wantError string
	}{
		{"string offsets decrease", int32s(0, 3, 8, 15), int32s(0, 8, 3, 15),
			`column "name": the value offsets decrease at row 2 (8, then 3)`},
		{"string offsets start below 0", int32s(0, 3, 8, 15), int32s(-3, 3, 8, 15),
			`column "name": the value offsets start at -3`},
		{"binary offsets decrease", int32s(0, 2, 11, 15), int32s(0, 11, 2, 15),
			`column "raw": the value offsets decrease at row 2 (11, then 2)`},
		{"list offsets decrease", int32s(0, 1, 3, 6), int32s(0, 3, 1, 6),
			`column "tags": the value offsets decrease at row 2 (3, then 1)`},
		{"list offsets end past the values", int32s(0, 1, 3, 6), int32s(0, 1, 3, 9),
			`column "tags": the value offsets end at 9, past the 6 list values`},
		{"list element offsets decrease", int32s(0, 6, 12, 18), int32s(0, 12, 6, 18),
			`column "tags.item": the value offsets decrease at row 2 (12, then 6)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if i := bytes.Index(good.Bytes(), tt.from); i < 0 || i != bytes.LastIndex(good.Bytes(), tt.from) {
				t.Fatalf("the offsets %x are not in the stream once", tt.from)
			}
			bad := bytes.Replace(good.Bytes(), tt.from, tt.to, 1)
			for _, by := range []string{"rows", "batches"} {
				err := readArrowBy[offsetRow](t, by, bad)
				if err == nil || !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), "in: corrupt Arrow IPC stream: the record batch from row 1: ") ||
					!strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("by %s: err %v, want a CorruptError with %q", by, err, tt.wantError)
				}
			}
		})
	}
	// A stream found by review: a results stream whose name offsets
	// decrease (arrow panicked: "slice bounds out of range [10:0]").
	found, err := os.ReadFile("testdata/arrow/offsets-decrease.arrow")
	if err != nil {
		t.Fatal(err)
	}
	for _, by := range []string{"rows", "batches"} {
		err := readArrowBy[schema.Result](t, by, found)
		want := `in: corrupt Arrow IPC stream: the record batch from row 1: column "outcome": the value offsets decrease at row 2 (2, then 0)`
		if !errors.Is(err, ErrCorrupt) || err.Error() != want {
			t.Fatalf("by %s: err %v, want %q", by, err, want)
		}
	}
	if err := readArrowBy[offsetRow](t, "rows", good.Bytes()); err != nil {
		t.Fatalf("the stream as written: %v", err)
	}
}

// readArrowBy reads the Arrow stream b named "in" to its end, by rows or
// by record batches, and returns the error that ended it (nil at EOF).
func readArrowBy[T any](t *testing.T, by string, b []byte) error {
	t.Helper()
	r, err := OpenArrow[T]("in", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer r.Close()
	if by == "rows" {
		_, err := r.ReadAll()
		return err
	}
	for {
		if _, err := r.Record(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
