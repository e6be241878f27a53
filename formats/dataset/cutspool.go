package dataset

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
)

// CutSuffix ends the name of the file KeepCut keeps the cut message of a
// stream in (or the cut last line of a text list): the bytes after the
// whole messages (lines), which its partial input holds. Nothing in it can be applied; it is kept for a person to look
// at, as bad input is.
const CutSuffix = ".cut.bad"

// A KeptCut is where KeepCut put a spool cut short.
type KeptCut struct {
	Partial string // the whole messages, closed with the end-of-stream marker, or the whole lines
	Tail    string // the cut message's or line's bytes (CutSuffix); "" when there are none
	Rest    int64  // the cut message's or line's length
}

// KeepCut sets aside the whole spool at path, in an inbox folder, that
// was cut short after whole bytes of whole messages or lines, as Salvage
// sets aside what a killed run had read: its whole messages or lines
// become a partial input, PartialPrefix and the spool's name with the
// extension .arrow or .txt, which no run applies on its own, and the
// bytes after them (the cut message or line) the spool's name followed by
// CutSuffix. It takes
//
//   - an Arrow IPC stream cut mid-message (rowio.CutError): the partial
//     input gets the end-of-stream marker;
//   - an Arrow IPC stream that ends after whole messages without its
//     end-of-stream marker (rowio.CutError's NoEnd; whole is its
//     length): the partial input is all of it and the marker, and there
//     is no cut message (Tail is "");
//   - a text list whose last line, which no newline ends, is cut
//     (hashlist.CutLineError): the partial input is its lines up to
//     their last newline.
//
// All of the stream's bytes are kept: the partial input's, less an Arrow
// one's end-of-stream marker, then the cut message's or line's. ext is
// the extension of the stage's spools (".spool", ".results"). The caller
// holds the spool's lock, and sets the spool aside some other way if
// KeepCut returns no Partial.
//
// The spool is renamed to a temporary name before it is cut to its whole
// messages: a crash meanwhile leaves what Salvage takes for a killed
// run's spool, and makes a partial input of, never a spool under its
// final name that holds whole messages only, which a later run would
// apply as a leftover. An error with Partial set is the inbox folder's
// fsync's, after the last rename.
func KeepCut(path, ext string, whole int64) (KeptCut, error) {
	f, err := fsutil.OpenRegular(path, os.O_RDWR, 0)
	if err != nil {
		return KeptCut{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return KeptCut{}, err
	}
	kind, err := checkCut(f, path, whole, st.Size())
	if err != nil {
		return KeptCut{}, err
	}
	tail := ""
	if st.Size() > whole {
		tail = path + CutSuffix
		if err := keepTail(f, whole, st.Size(), tail); err != nil {
			return KeptCut{}, fmt.Errorf("%s: keeping its cut message: %w", tail, err)
		}
	}
	dir := filepath.Dir(path)
	tmp, name := cutNames(path, ext, kind)
	if err := os.Rename(path, tmp); err != nil {
		return KeptCut{}, err
	}
	if err := fsutil.SyncDir(dir); err != nil {
		return KeptCut{}, fmt.Errorf("%w: the spool is left as %s, which the next run sets aside", err, tmp)
	}
	a, err := setPartial(f, dir, tmp, name)
	if a.path == "" {
		if err == nil { // setPartial keeps any stream with a whole batch or line
			err = fmt.Errorf("%s: no whole record batch or line", tmp)
		}
		return KeptCut{}, fmt.Errorf("%w: the spool is left as %s, which the next run sets aside", err, tmp)
	}
	return KeptCut{Partial: a.path, Tail: tail, Rest: st.Size() - whole}, err
}

// checkCut checks that the spool f (at path, size bytes) holds whole
// bytes of whole messages or lines that setPartial keeps, and something
// after them unless it is an Arrow stream (one without its end-of-stream
// marker has nothing after them); it returns the partial input's
// extension.
func checkCut(f *os.File, path string, whole, size int64) (string, error) {
	head := make([]byte, 4)
	k, _ := f.ReadAt(head, 0)
	if bytes.Equal(head[:k], []byte{0xff, 0xff, 0xff, 0xff}) {
		n, messages, err := rowio.ArrowPrefix(io.NewSectionReader(f, 0, size), rowio.DefaultLimits())
		switch {
		case err != nil:
			return "", err
		case n != whole || messages < 2 || size < whole:
			return "", fmt.Errorf("%s: %d bytes of %d whole messages, of %d, where the reader found %d before the cut",
				path, n, messages, size, whole)
		}
		return ".arrow", nil
	}
	n, err := lastLineEnd(io.NewSectionReader(f, 0, size))
	switch {
	case err != nil:
		return "", err
	case n != whole || n == 0 || size <= whole:
		return "", fmt.Errorf("%s: %d bytes of whole lines, of %d, where the reader found %d before the cut line",
			path, n, size, whole)
	}
	return ".txt", nil
}

// keepTail writes the bytes of f from off to size durably to path.
func keepTail(f *os.File, off, size int64, path string) error {
	t, err := fsutil.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(t, io.NewSectionReader(f, off, size-off)); err != nil {
		t.Abort()
		return err
	}
	return t.Commit()
}

// cutNames are the temporary path KeepCut moves the spool at path to
// (one that Salvage takes for a spool of ext a killed run left) and the
// name of the partial input it makes of it (extension kind).
func cutNames(path, ext, kind string) (tmp, partial string) {
	dir, base := filepath.Split(path)
	stem := strings.TrimPrefix(strings.TrimSuffix(base, filepath.Ext(base)), PartialPrefix)
	return filepath.Join(dir, fsutil.TempPrefix+stem+ext+"-cut"), PartialPrefix + stem + kind
}
