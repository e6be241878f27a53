package schema

import (
	"bytes"
	"testing"
)

// TestCompareHash: CompareHash orders hashes as bytes.Compare does,
// whether they differ in their first 8 bytes, after them, or not at all.
func TestCompareHash(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b Hash
	}{
		{"first byte", Hash{1}, Hash{2}},
		{"eighth byte", Hash{7: 0xff}, Hash{7: 0x01}},
		{"ninth byte", Hash{0: 9, 8: 1}, Hash{0: 9, 8: 2}},
		{"last byte", Hash{19: 0x80}, Hash{19: 0x7f}},
		{"equal", Hash{3, 19: 4}, Hash{3, 19: 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := CompareHash(tt.a, tt.b), bytes.Compare(tt.a[:], tt.b[:]); got != want {
				t.Fatalf("CompareHash = %d, want %d", got, want)
			}
			if got, want := CompareHash(tt.b, tt.a), bytes.Compare(tt.b[:], tt.a[:]); got != want {
				t.Fatalf("CompareHash reversed = %d, want %d", got, want)
			}
		})
	}
}
