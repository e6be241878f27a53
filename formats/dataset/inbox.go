package dataset

import (
	"io"
	"os"
	"path/filepath"

	"github.com/infohash/infohash/formats/fsutil"
)

// Spool copies r durably into a new file with extension ext in the inbox
// folder dir (DIR/inbox or a stage's sub-folder), so that input read from
// a pipe survives a kill and can be applied by a later run. The file
// appears under its final name only once complete.
func Spool(dir, ext string, r io.Reader) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, NewName(ext))
	f, err := fsutil.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Abort()
		return "", err
	}
	return path, f.Commit()
}

// Pending keeps the inputs that m's ledger has not applied yet, and the
// first of several with the same content id.
func Pending[T any](m *Manifest, ins []T, id func(T) string) []T {
	seen := map[string]bool{}
	var out []T
	for _, in := range ins {
		k := id(in)
		if m.HasApplied(k) || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, in)
	}
	return out
}
