package rowiotest

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// ArrowStream is an Arrow IPC stream of rec, one record batch, with its
// end-of-stream marker, as arrow-go writes one.
func ArrowStream(t testing.TB, rec arrow.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
