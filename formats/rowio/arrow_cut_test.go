package rowio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// cutStream is an Arrow stream of three batches of 5 observations, and
// where each of its messages ends (the schema's first).
func cutStream(t *testing.T) (stream []byte, ends []int) {
	t.Helper()
	var buf bytes.Buffer
	w := NewArrowWriter[schema.Observation]("test", &buf)
	for b := range 3 {
		rows := make([]schema.Observation, 5)
		for i := range rows {
			rows[i].InfoHash[0], rows[i].InfoHash[1] = byte(b), byte(i)
			rows[i].HashType, rows[i].ObservedAt, rows[i].Source = schema.HashV1, int64(1000*b+i), schema.SourceGetPeers
		}
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, buf.Len())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	meta, n, body := message(t, buf.Bytes(), 0)
	return buf.Bytes(), append([]int{meta + n + body}, ends...)
}

// readCut reads every row of stream, as Read does and as Record does,
// and returns the rows and the error that ended the stream (nil: io.EOF).
func readCut(t *testing.T, stream []byte, records bool) (int64, error) {
	t.Helper()
	r, err := OpenArrow[schema.Observation]("in", bytes.NewReader(stream))
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return readAll(r, records)
}

// readAll reads every row of r, as Read does or as Record does, and
// returns the rows and the error that ended the stream (nil: io.EOF).
func readAll(r *Reader[schema.Observation], records bool) (int64, error) {
	var rows int64
	buf := make([]schema.Observation, 3)
	for {
		var err error
		if records {
			var rec interface{ NumRows() int64 }
			if rec, err = r.Record(); err == nil {
				rows += rec.NumRows()
			}
		} else {
			var k int
			k, err = r.Read(buf)
			rows += int64(k)
		}
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
	}
}

// TestArrowCut cuts a stream at every byte. A cut where a message ends
// reads as the end of the stream, with the rows before it; a cut inside
// a message is a CutError (not corrupt input) that says how many rows
// came whole before it, after the reader returned them all, and where
// the cut message begins: inside the schema, it fails the open.
func TestArrowCut(t *testing.T) {
	stream, ends := cutStream(t)
	for _, records := range []bool{false, true} {
		for cut := 1; cut <= len(stream); cut++ {
			whole, batches := 0, 0 // the whole messages before the cut
			for i, e := range ends {
				if cut >= e {
					whole, batches = e, i
				}
			}
			rows, err := readCut(t, stream[:cut], records)
			between := cut == whole || cut == len(stream)
			if between {
				if err != nil || rows != int64(5*batches) {
					t.Fatalf("cut %d, between messages: %d rows, %v; want %d rows, no error", cut, rows, err, 5*batches)
				}
				continue
			}
			ce, ok := AsCut(err)
			if !ok || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrLimit) || !errors.Is(err, ErrCut) {
				t.Fatalf("cut %d: err = %v, want a CutError", cut, err)
			}
			if want := (CutError{Rows: int64(5 * batches), Whole: int64(whole), Size: int64(cut), Schema: whole > 0}); *ce != want || rows != ce.Rows {
				t.Fatalf("cut %d: %+v after %d rows read, want %+v", cut, *ce, rows, want)
			}
		}
	}
}

// TestArrowGarbageNotCut: a stream whose messages are corrupt, not cut,
// stays corrupt (or over a limit), whether the garbage is the whole stream
// or follows whole batches, however it ends.
func TestArrowGarbageNotCut(t *testing.T) {
	stream, ends := cutStream(t)
	head := stream[:ends[2]] // the schema and two batches
	junk := bytes.Repeat([]byte{0x5a}, 300)
	flipped := bytes.Clone(stream)
	for i := ends[0] + 8; i < ends[0]+40; i++ { // the first batch's metadata
		flipped[i] ^= 0xa5
	}
	tests := map[string][]byte{
		"junk":                    junk,
		"junk after whole ones":   append(bytes.Clone(head), junk...),
		"huge metadata length":    append(bytes.Clone(head), 0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f),
		"metadata flipped":        flipped,
		"metadata flipped, short": flipped[:ends[1]+3],
	}
	for name, s := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := readCut(t, s, false)
			if err == nil || errors.Is(err, ErrCut) {
				t.Fatalf("err = %v, want corrupt input, not a cut", err)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrLimit) {
				t.Logf("err = %v (neither corrupt nor over a limit)", err)
			}
		})
	}
}

// TestArrowCutLargeBody: a body read ahead of the reader (preReadOver)
// that the stream cuts is a cut too.
func TestArrowCutLargeBody(t *testing.T) {
	defer func(v int64) { preReadOver = v }(preReadOver)
	preReadOver = 16
	stream, ends := cutStream(t)
	for _, cut := range []int{ends[1] + 200, ends[3] - 1} {
		rows, err := readCut(t, stream[:cut], false)
		if ce, ok := AsCut(err); !ok || ce.Rows != rows {
			t.Fatalf("cut %d: %d rows, err = %v; want a CutError", cut, rows, err)
		}
	}
}

// TestArrowRequireEndMarker: with RequireEndMarker, a stream that ends
// between two messages without the end-of-stream marker is a CutError
// with NoEnd set, after the rows before it were returned, whether the
// marker is missing after the schema or after a batch; a stream with
// its marker (or the old 4-byte one) reads as whole, and a cut inside a
// message is the CutError it was.
func TestArrowRequireEndMarker(t *testing.T) {
	stream, ends := cutStream(t)
	legacy := append(bytes.Clone(stream[:ends[3]]), 0, 0, 0, 0)
	for _, tt := range []struct {
		name string
		in   []byte
		want *CutError // nil: read whole
	}{
		{"with its marker", stream, nil},
		{"with the old 4-byte marker", legacy, nil},
		{"no marker after the last batch", stream[:ends[3]], &CutError{Rows: 15, Whole: int64(ends[3]), Size: int64(ends[3]), Schema: true, NoEnd: true}},
		{"no marker after a batch", stream[:ends[1]], &CutError{Rows: 5, Whole: int64(ends[1]), Size: int64(ends[1]), Schema: true, NoEnd: true}},
		{"no marker after the schema", stream[:ends[0]], &CutError{Whole: int64(ends[0]), Size: int64(ends[0]), Schema: true, NoEnd: true}},
		{"cut inside a message", stream[:ends[2]+3], &CutError{Rows: 10, Whole: int64(ends[2]), Size: int64(ends[2] + 3), Schema: true}},
	} {
		for _, records := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, records %v", tt.name, records), func(t *testing.T) {
				r, err := OpenArrow[schema.Observation]("in", bytes.NewReader(tt.in))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				r.RequireEndMarker()
				rows, err := readAll(r, records)
				if tt.want == nil {
					if err != nil || rows != 15 {
						t.Fatalf("%d rows, %v; want 15, no error", rows, err)
					}
					return
				}
				ce, ok := AsCut(err)
				if !ok || *ce != *tt.want || rows != ce.Rows || !errors.Is(err, ErrCut) {
					t.Fatalf("%d rows, err = %v (%+v); want %+v", rows, err, ce, *tt.want)
				}
				if tt.want.NoEnd && !strings.Contains(err.Error(), "ended without its end-of-stream marker") {
					t.Fatalf("err = %q", err)
				}
			})
		}
	}
	// Without RequireEndMarker, the same stream reads as whole.
	if rows, err := readCut(t, stream[:ends[1]], true); err != nil || rows != 5 {
		t.Fatalf("without RequireEndMarker: %d rows, %v", rows, err)
	}
}
