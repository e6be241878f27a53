package rowio

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestArrowPrefix cuts an Arrow stream of three batches at every byte and
// checks that the prefix ArrowPrefix keeps, closed with the end-of-stream
// marker, reads back as exactly the whole batches before the cut.
func TestArrowPrefix(t *testing.T) {
	var buf bytes.Buffer
	w := NewArrowWriter[schema.Observation]("test", &buf)
	var ends []int // stream length after each batch
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
	stream := buf.Bytes()
	for cut := 0; cut <= len(stream); cut++ {
		n, _, err := ArrowPrefix(bytes.NewReader(stream[:cut]), DefaultLimits())
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		want := 0 // rows of the whole batches before the cut
		for _, e := range ends {
			if cut >= e {
				want += 5
			}
		}
		if want == 0 {
			continue // no batch survived: nothing to read back
		}
		fixed := append(append([]byte(nil), stream[:n]...), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)
		r, err := OpenArrow[schema.Observation]("salvaged", bytes.NewReader(fixed))
		if err != nil {
			t.Fatalf("cut %d: prefix %d: %v", cut, n, err)
		}
		got := 0
		out := make([]schema.Observation, 64)
		for {
			k, err := r.Read(out)
			got += k
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
		}
		r.Close()
		if got != want {
			t.Fatalf("cut %d: prefix of %d bytes holds %d rows, want %d", cut, n, got, want)
		}
	}
}

// FuzzArrowPrefix: any bytes (a spool cut anywhere, or garbage) give a
// prefix no longer than the input and made of whole messages, without a
// panic. (Reading the prefix back is the Arrow reader's own fuzzing.)
func FuzzArrowPrefix(f *testing.F) {
	var buf bytes.Buffer
	w := NewArrowWriter[schema.Observation]("seed", &buf)
	w.Write(sampleObs(5))
	w.Write(sampleObs(7))
	w.Close()
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x10, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		n, messages, err := ArrowPrefix(bytes.NewReader(data), DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		if n < 0 || n > int64(len(data)) || (messages == 0) != (n == 0) {
			t.Fatalf("prefix %d bytes, %d messages of a %d-byte input", n, messages, len(data))
		}
		// The prefix is a whole stream's worth of messages: scanning it
		// again finds the same.
		if n2, m2, _ := ArrowPrefix(bytes.NewReader(data[:n]), DefaultLimits()); n2 != n || m2 != messages {
			t.Fatalf("the %d-byte prefix rescans as %d bytes, %d messages (was %d)", n, n2, m2, messages)
		}
	})
}
