package dedup

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// failingReaderFrom is an output whose ReadFrom reads a little of r and
// then fails as a write would.
type failingReaderFrom struct{ err error }

func (f failingReaderFrom) Write(b []byte) (int, error) { return 0, f.err }

func (f failingReaderFrom) ReadFrom(r io.Reader) (int64, error) {
	n, err := r.Read(make([]byte, 4))
	if err != nil {
		return int64(n), err
	}
	return int64(n), f.err
}

// TestOutputErrReadFrom: a copy through outputErr.ReadFrom (a splice's
// copied chunks) records a failed write of the output, but not a failed
// read of the source, whether the output has a ReadFrom or not.
func TestOutputErrReadFrom(t *testing.T) {
	readFail, writeFail := errors.New("read failed"), errors.New("write failed")
	src := func(fail bool) io.Reader {
		r := io.Reader(strings.NewReader("column chunk bytes"))
		if fail {
			r = io.MultiReader(r, iotest.ErrReader(readFail))
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		w         io.Writer
		readFails bool
		want      error // outputErr's err
	}{
		{"ReadFrom, copied", &bytes.Buffer{}, false, nil},
		{"ReadFrom, read fails", &bytes.Buffer{}, true, nil},
		{"ReadFrom, write fails", failingReaderFrom{writeFail}, false, writeFail},
		{"Write only, copied", struct{ io.Writer }{&bytes.Buffer{}}, false, nil},
		{"Write only, read fails", struct{ io.Writer }{&bytes.Buffer{}}, true, nil},
		{"Write only, write fails", struct{ io.Writer }{failingReaderFrom{writeFail}}, false, writeFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &outputErr{w: tc.w}
			n, err := o.ReadFrom(src(tc.readFails))
			switch {
			case tc.readFails && err != readFail:
				t.Fatalf("err %v, want the read's", err)
			case tc.want != nil && err != tc.want:
				t.Fatalf("err %v, want the write's", err)
			case !tc.readFails && tc.want == nil && (err != nil || n != int64(len("column chunk bytes"))):
				t.Fatalf("copied %d bytes, %v", n, err)
			}
			if o.err != tc.want {
				t.Fatalf("output error %v, want %v", o.err, tc.want)
			}
			if b, ok := tc.w.(*bytes.Buffer); ok && tc.want == nil && b.String() != "column chunk bytes" {
				t.Fatalf("output %q", b.String())
			}
		})
	}
}

// readThenWriteFails is an output whose ReadFrom reads r to its error and
// then fails as a write would, as fsutil.Uncached.ReadFrom does when the
// read that fills its buffer fails and the buffer's write fails too.
type readThenWriteFails struct{ err error }

func (f readThenWriteFails) Write(b []byte) (int, error) { return 0, f.err }

func (f readThenWriteFails) ReadFrom(r io.Reader) (int64, error) {
	n, _ := io.Copy(io.Discard, r)
	return n, f.err
}

// TestOutputErrReadFromBothFail: when the source's read and the output's
// write both fail and ReadFrom returns the write's error, outputErr
// records it as the output's: a failed write (no space left) is not
// reported as a damaged state file.
func TestOutputErrReadFromBothFail(t *testing.T) {
	readFail, writeFail := errors.New("read failed"), errors.New("write failed")
	o := &outputErr{w: readThenWriteFails{writeFail}}
	_, err := o.ReadFrom(io.MultiReader(strings.NewReader("chunk"), iotest.ErrReader(readFail)))
	if err != writeFail || o.err != writeFail {
		t.Fatalf("ReadFrom: %v, output error %v; want both the write's", err, o.err)
	}
}
