package fsutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestDatasetFileModes: every writer of dataset files gives a new file
// mode 0666 less the umask, as CreateOutput does, so that another user
// reads CURRENT and the manifests as well as the Parquet files (0600 from
// os.CreateTemp locked them out).
func TestDatasetFileModes(t *testing.T) {
	commitLocked := func(unnamed bool) func(string) error {
		return func(p string) error {
			defer func(was bool) { unnamedFirst = was }(unnamedFirst)
			unnamedFirst = unnamed
			f, lk, err := CreateLocked(p)
			if err != nil {
				return err
			}
			defer lk.Close()
			f.Write([]byte("x"))
			return f.Commit()
		}
	}
	writers := []struct {
		name  string
		write func(string) error
	}{
		{"Create", func(p string) error {
			f, err := Create(p)
			if err != nil {
				return err
			}
			f.Write([]byte("x"))
			return f.Commit()
		}},
		{"WriteFile", func(p string) error { return WriteFile(p, []byte("x")) }},
		{"WriteFileIfAbsent", func(p string) error { _, err := WriteFileIfAbsent(p, []byte("x")); return err }},
		{"CreateLocked unnamed", commitLocked(true)},
		{"CreateLocked named", commitLocked(false)},
	}
	for _, umask := range []int{0o022, 0o002, 0o077} {
		for _, w := range writers {
			t.Run(w.name+"/"+fs.FileMode(umask).String(), func(t *testing.T) {
				withUmask(t, umask)
				p := filepath.Join(t.TempDir(), "CURRENT")
				if err := w.write(p); err != nil {
					t.Fatal(err)
				}
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if want := fs.FileMode(0o666 &^ umask); fi.Mode().Perm() != want {
					t.Fatalf("mode %v, want %v", fi.Mode().Perm(), want)
				}
			})
		}
	}
}
