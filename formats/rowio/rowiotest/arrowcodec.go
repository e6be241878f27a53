package rowiotest

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// Recompress returns the Arrow IPC stream plain with its buffers
// compressed with codec ("" for none: plain itself, "lz4", "zstd"), as
// pyarrow or arrow-go write one when asked; rowio's writer writes them
// uncompressed.
func Recompress(t testing.TB, codec string, plain []byte) []byte {
	t.Helper()
	if codec == "" {
		return plain
	}
	r, err := ipc.NewReader(bytes.NewReader(plain))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var out bytes.Buffer
	opt := ipc.WithZstd()
	if codec == "lz4" {
		opt = ipc.WithLZ4()
	}
	cw := ipc.NewWriter(&out, ipc.WithSchema(r.Schema()), opt)
	for r.Next() {
		if err := cw.Write(r.Record()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
