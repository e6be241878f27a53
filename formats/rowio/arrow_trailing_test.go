package rowio

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestArrowDataAfterEnd: arrow's reader stops at the end-of-stream
// marker, so what follows it (a second stream joined to the first, or
// garbage) was dropped unread and the input taken for whole. It is a
// corrupt stream, after the rows before the marker, for Read and Record
// alike.
func TestArrowDataAfterEnd(t *testing.T) {
	stream, _ := cutStream(t)
	tests := []struct {
		name    string
		in      []byte
		wantErr string
	}{
		{"whole", stream, ""},
		{"two streams", append(bytes.Clone(stream), stream...), "data follows its end-of-stream marker at byte"},
		{"garbage", append(bytes.Clone(stream), "hello\n"...), "data follows its end-of-stream marker at byte"},
		{"one zero byte", append(bytes.Clone(stream), 0), "data follows its end-of-stream marker at byte"},
	}
	for _, tt := range tests {
		for _, records := range []bool{false, true} {
			t.Run(tt.name, func(t *testing.T) {
				rows, err := readCut(t, tt.in, records)
				if rows != 15 {
					t.Errorf("read %d rows, want 15", rows)
				}
				if tt.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "in: ") || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("err = %v, want in: ...%q (ErrCorrupt)", err, tt.wantErr)
				}
			})
		}
	}
}
