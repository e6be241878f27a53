package merge

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestReadOtherManifest: merge --from reads the other dataset's manifest
// (for the union's ledger id) only as a regular file: a FIFO, directory
// or link put there after the other's Current read it is refused at
// once, naming it; a missing one stays fs.ErrNotExist (otherCollected's
// case). With os.ReadFile the FIFO blocked the merge for good.
func TestReadOtherManifest(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for _, err := range []error{
		os.WriteFile(at("000000000001.json"), []byte("{}\n"), 0o644),
		unix.Mkfifo(at("fifo.json"), 0o644),
		os.Mkdir(at("dir.json"), 0o755),
		os.Symlink(at("000000000001.json"), at("link.json")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ name, kind string }{
		{"000000000001.json", ""},
		{"fifo.json", "a FIFO"},
		{"dir.json", "a directory"},
		{"link.json", "a symbolic link"},
		{"missing.json", "nothing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var raw []byte
			err := fsutiltest.Unblocked(t, at(tt.name), func() (err error) { raw, err = readManifest(at(tt.name)); return err })
			var nr *fsutil.NotRegularError
			switch tt.kind {
			case "":
				if err != nil || string(raw) != "{}\n" {
					t.Fatalf("read %q, %v", raw, err)
				}
			case "nothing":
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("err %v; want fs.ErrNotExist", err)
				}
			default:
				if !errors.As(err, &nr) || nr.Kind != tt.kind || nr.Path != at(tt.name) {
					t.Fatalf("err %v; want %s refused as %s", err, tt.name, tt.kind)
				}
			}
		})
	}
}
