package goldentest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	for _, tc := range []struct{ got, want, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\n got  b\n want c"},
		{"a\n", "a\nb\n", "line 2:\n got  \n want b"},
		{"x", "", "line 1:\n got  x\n want "},
	} {
		if d := FirstDiff([]byte(tc.got), []byte(tc.want)); d != tc.diff {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", tc.got, tc.want, d, tc.diff)
		}
	}
}

func TestCheckUpdateWritesThenMatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	Check(t, path, []byte("one\n"), true)
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\n" {
		t.Fatalf("golden file %q, %v", b, err)
	}
	Check(t, path, []byte("one\n"), false)
	ft := &fakeT{TB: t}
	func() {
		defer func() { recover() }()
		Check(ft, path, []byte("two\n"), false)
	}()
	if !strings.Contains(ft.msg, "x.golden") || !strings.Contains(ft.msg, "line 1") {
		t.Fatalf("a difference failed with %q", ft.msg)
	}
}

// fakeT records a Fatalf instead of ending the test.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}
