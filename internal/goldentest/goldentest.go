// Package goldentest compares what a test produced with a golden file
// kept under the package's testdata/.
package goldentest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with the golden file at path. With update set it
// first writes got there (making its folder): the test's -update flag.
// A difference fails t, naming the file and the first line that differs.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("output differs from %s (go test -update rewrites it) at %s", path, FirstDiff(got, want))
	}
}

// FirstDiff shows the first line where got and want differ, or "" when
// they are equal.
func FirstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range max(len(g), len(w)) {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, gl, wl)
		}
	}
	return ""
}
