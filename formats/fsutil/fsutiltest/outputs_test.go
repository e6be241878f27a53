package fsutiltest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOutputsCheck: Check passes what a writer left as it was, and
// fails each way a writer can break an output: the path replaced by a
// regular file (a rename onto it), a temporary file left beside it, a
// file moved into the directory (mv onto it).
func TestOutputsCheck(t *testing.T) {
	for _, o := range Outputs(t, "out") {
		t.Run(o.Name, func(t *testing.T) {
			if err := o.Changed(); err != nil {
				t.Fatalf("untouched: %v", err)
			}
			if o.Fails {
				return // a read-only folder takes no temporary file
			}
			tmp := filepath.Join(filepath.Dir(o.Path), ".tmp-out-1")
			if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if o.Changed() == nil {
				t.Fatal("a temporary file left beside it passed")
			}
			if o.Name == "directory" { // a rename cannot replace it, mv moves into it
				if err := os.Rename(tmp, filepath.Join(o.Path, "x")); err != nil {
					t.Fatal(err)
				}
				if o.Changed() == nil {
					t.Fatal("a file moved into the directory passed")
				}
				return
			}
			if err := os.Rename(tmp, o.Path); err != nil {
				t.Fatal(err)
			}
			if o.Changed() == nil {
				t.Fatal("replaced by a regular file, it passed")
			}
		})
	}
}

// TestFIFOContent: what is written to the FIFO of Outputs comes back,
// whole, from Content.
func TestFIFOContent(t *testing.T) {
	for _, o := range Outputs(t, "out") {
		if o.Name != "FIFO" {
			continue
		}
		want := make([]byte, 200<<10) // more than a pipe holds
		for i := range want {
			want[i] = byte(i % 251)
		}
		if err := os.WriteFile(o.Path, want, 0); err != nil {
			t.Fatal(err)
		}
		if got := o.Content(t); string(got) != string(want) {
			t.Fatalf("read %d bytes back, want %d", len(got), len(want))
		}
		return
	}
	t.Fatal("Outputs made no FIFO")
}

// TestNullDevice: the device discards what is written and, as root, is
// not /dev/null.
func TestNullDevice(t *testing.T) {
	p := NullDevice(t)
	if os.Geteuid() == 0 && p == os.DevNull {
		t.Fatal("root got /dev/null itself")
	}
	if err := os.WriteFile(p, []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || len(b) != 0 {
		t.Fatalf("read back %q, %v", b, err)
	}
}
