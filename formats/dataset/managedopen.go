package dataset

import (
	"errors"
	"io"
	"os"

	"github.com/infohash/infohash/formats/fsutil"
)

// openManaged opens the dataset's own file at path (CURRENT, a
// manifest): only a regular file, checked on what was opened
// (fsutil.OpenRegular), so that a FIFO, link, directory or device put
// there even an instant before the open is refused as one found there
// (fsutil.NotRegularError), not read. A variable for tests: to put
// something at path just before the open.
var openManaged = fsutil.OpenRegular

// openPolicy is openManaged for DIR/policy.json, which may be a link
// ("policy set" writes through it): the link is followed, and what it
// leads to must be a regular file (fsutil.OpenRegularTarget).
var openPolicy = fsutil.OpenRegularTarget

// readAll reads f to its end as os.ReadFile reads a file: into a buffer
// of f's size, grown if the file grew meanwhile.
func readAll(f *os.File) ([]byte, error) {
	size := 0
	if fi, err := f.Stat(); err == nil && fi.Size() < 1<<30 {
		size = int(fi.Size())
	}
	b := make([]byte, 0, size+1) // one more, to read the end of file without growing
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		} else if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// readPolicyFile reads the policy file at path as os.ReadFile does, but
// only what openPolicy opens.
func readPolicyFile(path string) ([]byte, error) {
	f, err := openPolicy(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}
