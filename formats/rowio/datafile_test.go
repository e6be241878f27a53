package rowio

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDataFileOpen: a RecordedFile is opened only once its footer
// matches the recorded sum, and what Open returns reads the whole file;
// an UnrecordedFile, or a file of a format that recorded no sum, is
// opened unchecked; errors name the file.
func TestDataFileOpen(t *testing.T) {
	b, start := footerFile(t)
	sum, err := SumFooter(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	intact := filepath.Join(dir, "intact.parquet")
	damaged := filepath.Join(dir, "damaged.parquet")
	bad := bytes.Clone(b)
	bad[start] ^= 0x10
	for p, data := range map[string][]byte{intact: b, damaged: bad} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing.parquet")
	for _, tc := range []struct {
		name string
		file DataFile
		want []byte // the file's bytes, when it opens
		err  func(error) bool
	}{
		{"recorded, intact", RecordedFile(intact, sum), b, nil},
		{"recorded, damaged", RecordedFile(damaged, sum), nil, func(err error) bool {
			_, ok := errors.AsType[*FooterError](err)
			return ok
		}},
		{"recorded without a sum (an older format), damaged", RecordedFile(damaged, FooterSum{}), bad, nil},
		{"unrecorded, damaged", UnrecordedFile(damaged), bad, nil},
		{"missing", RecordedFile(missing, sum), nil, func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fh, r, size, err := tc.file.Open()
			if tc.err != nil {
				if !tc.err(err) || !strings.Contains(err.Error(), tc.file.Path()) {
					t.Fatalf("Open: %v, not the error expected naming %s", err, tc.file.Path())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			got := make([]byte, size)
			if n, err := r.ReadAt(got, 0); n != len(got) {
				t.Fatalf("ReadAt: %d bytes, %v", n, err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("read %d bytes, not the file's %d", len(got), len(tc.want))
			}
		})
	}
}

// TestDataFileParts: a DataFile gives back what it was built from; an
// UnrecordedFile has no sum and lacks no column.
func TestDataFileParts(t *testing.T) {
	s := FooterSum{Size: 40, CRC32C: 7}
	lacks := []string{"a", "b"}
	f := RecordedFile("/d/x.parquet", s, lacks...)
	if f.Path() != "/d/x.parquet" || f.Footer() != s || !slices.Equal(f.Lacks(), lacks) {
		t.Errorf("RecordedFile: %q %+v %q", f.Path(), f.Footer(), f.Lacks())
	}
	u := UnrecordedFile("/in.parquet")
	if u.Path() != "/in.parquet" || u.Footer().Recorded() || u.Lacks() != nil {
		t.Errorf("UnrecordedFile: %q %+v %q", u.Path(), u.Footer(), u.Lacks())
	}
}
