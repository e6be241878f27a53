package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// arrowStream is an Arrow IPC stream of results as rowio writes it.
func arrowStream(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := Create[schema.Result]("-", &b)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(sampleResults())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// message returns the offset of message i's metadata in a stream, its
// length and its body length.
func message(t *testing.T, s []byte, i int) (meta, n, body int) {
	t.Helper()
	off := 0
	for k := 0; ; k++ {
		n = int(binary.LittleEndian.Uint32(s[off+4:]))
		b, err := checkMessage(s[off+8 : off+8+n])
		if err != nil {
			t.Fatal(err)
		}
		if k == i {
			return off + 8, n, int(b)
		}
		off += 8 + n + int(b)
	}
}

func TestArrowFraming(t *testing.T) {
	good := arrowStream(t)
	lim := DefaultLimits()
	patch := func(f func(s []byte)) []byte { s := bytes.Clone(good); f(s); return s }
	// The record batch is message 1; its buffers vector is slot 2 of the
	// RecordBatch table (the Message's header, slot 2).
	buffers := func(s []byte) (int, int) {
		at, n, _ := message(t, s, 1)
		meta := fbBytes(s[at : at+n])
		msg, _ := meta.table(0)
		hp, _ := msg.field(2)
		rb, _ := meta.table(hp)
		start, k, err := rb.vector(2, 16)
		if err != nil || k == 0 {
			t.Fatalf("no buffers: %v", err)
		}
		return at + int(start), int(k)
	}
	tests := []struct {
		name, want string
		stream     []byte
		limit      bool
	}{
		{"metadata over the limit", "bytes of metadata (limit 4194304)", patch(func(s []byte) {
			binary.LittleEndian.PutUint32(s[4:], 1<<30)
		}), true},
		{"old framing garbage", "bytes of metadata (limit", []byte("garbage stream"), true},
		{"negative body", "message body of -8 bytes", patch(func(s []byte) {
			at, n, _ := message(t, s, 1)
			meta := fbBytes(s[at : at+n])
			msg, _ := meta.table(0)
			p, _ := msg.field(3)
			binary.LittleEndian.PutUint64(s[at+int(p):], uint64(1<<64-8))
		}), false},
		// A length the stream then ends within reads as a cut (the
		// framing cannot tell it from a writer stopped mid-message), and
		// costs only the bytes sent, not the gigabyte declared.
		{"huge body, short stream", "cut mid-message after 0 complete rows", patch(func(s []byte) {
			at, n, _ := message(t, s, 1)
			meta := fbBytes(s[at : at+n])
			msg, _ := meta.table(0)
			p, _ := msg.field(3)
			binary.LittleEndian.PutUint64(s[at+int(p):], 1e9)
		}), false},
		{"buffer outside the body", "outside the", patch(func(s []byte) {
			start, k := buffers(s)
			binary.LittleEndian.PutUint64(s[start+16*(k-1)+8:], 1<<40)
		}), false},
		{"buffer at a negative offset", "outside the", patch(func(s []byte) {
			start, _ := buffers(s)
			binary.LittleEndian.PutUint64(s[start:], uint64(1<<64-16))
		}), false},
		{"fields vector lie", "malformed message metadata", patch(func(s []byte) {
			at, n, _ := message(t, s, 0)
			meta := fbBytes(s[at : at+n])
			msg, _ := meta.table(0)
			hp, _ := msg.field(2)
			sc, _ := meta.table(hp)
			p, _ := sc.field(1)
			rel, _ := meta.u32(p)
			binary.LittleEndian.PutUint32(s[at+int(p+rel):], 0xfffffff0)
		}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := OpenArrow[schema.Result]("in", &framedReader{r: bytes.NewReader(tt.stream), lim: lim})
			if err == nil {
				_, err = r.ReadAll()
				r.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") ||
				!strings.HasPrefix(err.Error(), "in: ") {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			t.Log(err)
			if errors.Is(err, ErrLimit) != tt.limit {
				t.Fatalf("limit = %v: %v", errors.Is(err, ErrLimit), err)
			}
		})
	}
	r, err := OpenArrow[schema.Result]("in", bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := r.ReadAll(); err != nil || len(rows) != 2 {
		t.Fatalf("good stream: %d rows, %v", len(rows), err)
	}
}

func TestLimitAllocator(t *testing.T) {
	a := &limitAllocator{mem: newLimitAllocator(DefaultLimits()).mem, one: 100, live: 150}
	refused := func(f func()) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = p.(error)
			}
		}()
		f()
		return nil
	}
	var b1, b2 []byte
	if err := refused(func() { b1 = a.Allocate(80) }); err != nil {
		t.Fatal(err)
	}
	if err := refused(func() { a.Allocate(101) }); !errors.Is(err, ErrLimit) {
		t.Fatalf("one buffer over the limit: %v", err)
	}
	if err := refused(func() { a.Allocate(90) }); !errors.Is(err, ErrLimit) {
		t.Fatalf("total over the limit: %v", err)
	}
	if err := refused(func() { b1 = a.Reallocate(40, b1) }); err != nil {
		t.Fatal(err)
	}
	a.Free(b1)
	if err := refused(func() { b2 = a.Allocate(100) }); err != nil {
		t.Fatalf("after Free: %v", err)
	}
	a.Free(b2)
	if a.used.Load() != 0 {
		t.Fatalf("%d bytes still counted", a.used.Load())
	}
}

// TestLimitAllocatorRecycles: with recycle set, buffers get power-of-two
// capacities and a freed one comes back for the next request of its size
// class; without, buffers are exactly the size asked and never reused;
// the accounting follows the capacities either way.
func TestLimitAllocatorRecycles(t *testing.T) {
	for _, recycle := range []bool{false, true} {
		a := newLimitAllocator(DefaultLimits())
		a.recycle.Store(recycle)
		b := a.Allocate(1000)
		if want := map[bool]int{false: 1000, true: 1024}[recycle]; len(b) != 1000 || cap(b) != want {
			t.Fatalf("len %d cap %d, want cap %d", len(b), cap(b), want)
		}
		a.Free(b)
		c := a.Allocate(900)
		if same := &b[:1][0] == &c[:1][0]; same != recycle {
			t.Fatalf("recycle %v: reused %v", recycle, same)
		}
		if z := a.Allocate(0); len(z) != 0 {
			t.Fatalf("Allocate(0) gave %d bytes", len(z))
		} else {
			a.Free(z)
		}
		c = a.Reallocate(5000, c)
		if len(c) != 5000 || a.used.Load() != int64(cap(c)) {
			t.Fatalf("after Reallocate: len %d cap %d, %d bytes counted", len(c), cap(c), a.used.Load())
		}
		if recycle && cap(c) != 8192 {
			t.Fatalf("recycled buffer of 5000 bytes has capacity %d", cap(c))
		}
	}
}

// TestArrowFixedLength: a fixed-size field (a 20-byte infohash) takes a
// binary value of exactly its size; any other length, a v2 hash's 32
// bytes too, is an error naming the column and row, never cut short (a
// reader that takes a full v2 hash reads the column as []byte).
func TestArrowFixedLength(t *testing.T) {
	type blobHash struct {
		InfoHash []byte `parquet:"info_hash"`
	}
	type fixedHash struct {
		InfoHash schema.Hash `parquet:"info_hash"`
	}
	for _, tt := range []struct {
		name    string
		n       int
		wantErr string
	}{
		{"20 bytes", 20, ""},
		{"19 bytes", 19, `s: column "info_hash" row 1: 19 bytes, want 20`},
		{"32 bytes", 32, `s: column "info_hash" row 1: 32 bytes, want 20`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewArrowWriter[blobHash]("s", &b)
			h := bytes.Repeat([]byte{7}, tt.n)
			if err := w.Write([]blobHash{{h}}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := OpenArrow[fixedHash]("s", &b)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rows, err := r.ReadAll()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("rows %x, err %v; want %q", rows, err, tt.wantErr)
				}
				return
			}
			if err != nil || len(rows) != 1 || !bytes.Equal(rows[0].InfoHash[:], h) {
				t.Fatalf("rows %x, err %v", rows, err)
			}
		})
	}
}

// TestArrowReadDoesNotWaitForTheNextBatch writes one record batch of 3
// rows into a pipe kept open: Read with room for 256 must return those 3
// at once rather than block for a batch that has not come (fetch reading
// jobs from a slow writer started none until 256 arrived).
func TestArrowReadDoesNotWaitForTheNextBatch(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() {
		w := NewArrowWriter[schema.Observation]("pipe", pw)
		rows := make([]schema.Observation, 3)
		for i := range rows {
			rows[i].InfoHash[0], rows[i].HashType, rows[i].ObservedAt = byte(i+1), schema.HashV1, int64(i)
		}
		_ = w.Write(rows) // flushed: the reader sees it; the stream stays open
	}()
	r, err := OpenArrow[schema.Observation]("pipe", pr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan int, 1)
	go func() {
		n, err := r.Read(make([]schema.Observation, 256))
		if err != nil {
			t.Errorf("Read: %v", err)
		}
		got <- n
	}()
	select {
	case n := <-got:
		if n != 3 {
			t.Errorf("Read returned %d rows, want the batch's 3", n)
		}
	case <-time.After(time.Minute): // a bound on a hang, not a speed
		t.Fatal("Read waited for a second batch instead of returning the first")
	}
	pw.Close()
}
