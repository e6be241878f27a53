package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/sniff/snifftest"
)

// fillDiskAfter makes spool writes fail with ENOSPC once room bytes are
// written, as a full disk does: the write that reaches it writes what
// fits.
func fillDiskAfter(t *testing.T, room int) {
	t.Helper()
	left := room
	writeSpool = func(f *fsutil.File, p []byte) (int, error) {
		if len(p) <= left {
			left -= len(p)
			return f.Write(p)
		}
		n, err := f.Write(p[:left])
		left -= n
		if err == nil {
			err = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		}
		return n, err
	}
	t.Cleanup(func() { writeSpool = func(f *fsutil.File, p []byte) (int, error) { return f.Write(p) } })
}

// spoolers are the two spools, run to their end: merge's (Spool) and
// dedup's (StartSpool, whose readers must get the spool's error too).
var spoolers = []struct {
	name, ext string
	spool     func(dir string, r io.Reader) error
}{
	{"Spool", ".results", func(dir string, r io.Reader) error {
		_, err := Spool(dir, ".results", r)
		return err
	}},
	{"StartSpool", ".spool", func(dir string, r io.Reader) error {
		s, err := StartSpool(dir, ".spool", r, nil)
		if err != nil {
			return err
		}
		defer s.Close()
		if _, rerr := io.ReadAll(s.NewReader(context.Background())); rerr == nil {
			return errors.New("a reader of the failed spool read to a clean end")
		}
		return s.Wait(context.Background())
	}},
}

// TestSpoolKeepsWhatWasWritten: a spool whose write fails (a full disk)
// keeps what it had written as Salvage keeps a killed run's, a
// partial-* file in the inbox, instead of throwing away what a pipe will
// not send again; the error says what was kept and where, or that
// nothing could be. Both spools: merge's (Spool) and dedup's (StartSpool,
// whose readers get the error too).
func TestSpoolKeepsWhatWasWritten(t *testing.T) {
	stream, ends := arrowBatches(t, 4)
	gz := snifftest.Gzip(t, bytes.Repeat([]byte("0123456789abcdef0123456789abcdef01234567\n"), 50))
	for _, tt := range []struct {
		name    string
		content []byte
		room    int    // bytes the disk takes
		kind    string // the partial file's extension; "" none
		keep    int    // its length
		says    string // in the error, after the write's
	}{
		{"arrow cut in the third batch", stream, ends[2] - 5, ".arrow", ends[1] + 8, "; what was read before is kept as "},
		{"text cut mid-line", []byte("aa\nbb\ncc\n"), 7, ".txt", 6, "; what was read before is kept as "},
		{"arrow cut in the first batch", stream, ends[0] - 5, "", 0, "; nothing was kept: no whole record batch was written"},
		{"nothing written", []byte("aa\n"), 0, "", 0, "; nothing was kept: nothing was written"},
		{"parquet cut short", append([]byte("PAR1"), make([]byte, 100)...), 50, "", 0, "; nothing was kept: what was read is a Parquet file cut short, which cannot be applied"},
		// All its bytes, named as compressed: not cut at a newline byte and named .txt.
		{"gzip cut short", gz, len(gz) - 3, ".gz", len(gz) - 3, "; what was read before is kept as "},
	} {
		for _, sp := range spoolers {
			t.Run(tt.name+"/"+sp.name, func(t *testing.T) {
				dir := t.TempDir()
				fillDiskAfter(t, tt.room)
				err := sp.spool(dir, bytes.NewReader(tt.content))
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("spool: %v, want the write's ENOSPC", err)
				}
				ents, _ := os.ReadDir(dir)
				if tt.kind == "" {
					if len(ents) != 0 || !strings.Contains(err.Error(), "no space left on device"+tt.says) {
						t.Fatalf("left %v; error %q", ents, err)
					}
					return
				}
				if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), tt.kind) ||
					(tt.kind != ".bad") != strings.HasPrefix(ents[0].Name(), PartialPrefix) {
					t.Fatalf("inbox holds %v, want one %s file", ents, tt.kind)
				}
				p := filepath.Join(dir, ents[0].Name())
				if want := "no space left on device" + tt.says + p; !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q\nlacks %q", err, want)
				}
				b, rerr := os.ReadFile(p)
				if rerr != nil || len(b) != tt.keep {
					t.Fatalf("kept %d bytes (%v), want %d", len(b), rerr, tt.keep)
				}
				if tt.kind == ".arrow" {
					r, err := rowio.OpenArrow[schema.Observation]("partial", bytes.NewReader(b))
					if err != nil {
						t.Fatal(err)
					}
					rows, err := r.ReadAll()
					r.Close()
					if err != nil || len(rows) != 6 {
						t.Fatalf("the partial stream holds %d rows (%v), want the 6 of two whole batches", len(rows), err)
					}
				}
				// The next run's Salvage leaves it as it is.
				if got, err := Salvage(dir, sp.ext); err != nil || len(got) != 0 {
					t.Fatalf("Salvage: %v, %v", got, err)
				}
				if after, _ := os.ReadDir(dir); len(after) != 1 || after[0].Name() != ents[0].Name() {
					t.Fatalf("Salvage made %v of %s", after, ents[0].Name())
				}
			})
		}
	}
}

// failSync makes the fsync of every spool fail with EIO, as a failing
// disk's does.
func failSync(t *testing.T) {
	t.Helper()
	syncSpool = func(f *fsutil.File) error {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: syscall.EIO}
	}
	t.Cleanup(func() { syncSpool = func(f *fsutil.File) error { return f.Sync() } })
}

// TestSpoolKeepsWhatFailedItsFsync: a spool whose fsync fails at the end
// keeps all that was read, as it is (even a last line without its
// newline, even Parquet), set aside as a partial-* file in the inbox,
// which no run applies on its own; the error says where. It used to be
// removed with the failed Commit: the stream had sent it, and would not
// again.
func TestSpoolKeepsWhatFailedItsFsync(t *testing.T) {
	stream, _ := arrowBatches(t, 3)
	parquet := append(append([]byte("PAR1"), make([]byte, 60)...), "PAR1"...)
	hashes := []byte("0123456789abcdef0123456789abcdef01234567\n")
	for _, tt := range []struct {
		name    string
		content []byte
		kind    string // the partial file's extension; "" none
	}{
		{"arrow", stream, ".arrow"},
		{"text without a last newline", []byte("aa\nbb\ncc"), ".txt"},
		{"parquet", parquet, ".parquet"},
		{"gzip", snifftest.Gzip(t, hashes), ".gz"}, // was .txt
		{"zstd", snifftest.Zstd(t, hashes), ".zst"},
		{"empty", nil, ""},
	} {
		for _, sp := range spoolers {
			t.Run(tt.name+"/"+sp.name, func(t *testing.T) {
				dir := t.TempDir()
				failSync(t)
				err := sp.spool(dir, bytes.NewReader(tt.content))
				if !errors.Is(err, syscall.EIO) {
					t.Fatalf("spool: %v, want the fsync's EIO", err)
				}
				ents, _ := os.ReadDir(dir)
				if tt.kind == "" {
					if len(ents) != 0 || !strings.Contains(err.Error(), "; nothing was kept: nothing was written") {
						t.Fatalf("left %v; error %q", ents, err)
					}
					return
				}
				if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), PartialPrefix) || !strings.HasSuffix(ents[0].Name(), tt.kind) {
					t.Fatalf("inbox holds %v, want one partial-*%s file", ents, tt.kind)
				}
				p := filepath.Join(dir, ents[0].Name())
				if want := "input/output error; all that was read is kept as " + p; !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q\nlacks %q", err, want)
				}
				if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, tt.content) {
					t.Fatalf("kept %d bytes (%v), want the %d read", len(b), err, len(tt.content))
				}
				if got, err := Salvage(dir, sp.ext); err != nil || len(got) != 0 {
					t.Fatalf("Salvage: %v, %v", got, err)
				}
				if after, _ := os.ReadDir(dir); len(after) != 1 || after[0].Name() != ents[0].Name() {
					t.Fatalf("Salvage made %v of %s", after, ents[0].Name())
				}
			})
		}
	}
}

// blockFinalName is a reader of content that, before it reports the
// end, puts a non-empty directory at the final name of the spool being
// written in dir (found from its temporary name), so that the spool's
// rename into place is refused (fsutil.NotRegularError: a rename would
// fail, EISDIR).
type blockFinalName struct {
	t   *testing.T
	dir string
	r   io.Reader
}

func (b *blockFinalName) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != io.EOF {
		return n, err
	}
	ents, _ := os.ReadDir(b.dir)
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, fsutil.TempPrefix) {
			continue
		}
		final := filepath.Join(b.dir, strings.TrimPrefix(name[:strings.LastIndexByte(name, '-')], fsutil.TempPrefix))
		if err := os.MkdirAll(filepath.Join(final, "in-the-way"), 0o755); err != nil {
			b.t.Error(err)
		}
		return n, err
	}
	b.t.Errorf("no temporary spool in %s", b.dir)
	return n, err
}

// TestSpoolKeepsWhatFailedItsRename: a spool whose fsync succeeded but
// whose rename into place fails (here: is refused, a directory holding
// its name) keeps all that was read, as one whose
// fsync failed does, set aside whole as a partial-* file in the inbox;
// the error says where, and that it is whole. Commit used to remove it
// with its error: the stream had sent it, and would not again.
func TestSpoolKeepsWhatFailedItsRename(t *testing.T) {
	stream, _ := arrowBatches(t, 3)
	for _, tt := range []struct {
		name    string
		content []byte
		kind    string // the partial file's extension; "" none
	}{
		{"arrow", stream, ".arrow"},
		{"text without a last newline", []byte("aa\nbb\ncc"), ".txt"},
		{"empty", nil, ""},
	} {
		for _, sp := range spoolers {
			t.Run(tt.name+"/"+sp.name, func(t *testing.T) {
				dir := t.TempDir()
				err := sp.spool(dir, &blockFinalName{t: t, dir: dir, r: bytes.NewReader(tt.content)})
				if nr := new(fsutil.NotRegularError); !errors.As(err, &nr) || nr.Kind != "a directory" {
					t.Fatalf("spool: %v, want the rename refused: a directory holds the name", err)
				}
				var kept []string
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					if !e.IsDir() {
						kept = append(kept, e.Name())
					}
				}
				if tt.kind == "" {
					if len(kept) != 0 || !strings.Contains(err.Error(), "; nothing was kept: nothing was written") {
						t.Fatalf("left %v; error %q", kept, err)
					}
					return
				}
				if len(kept) != 1 || !strings.HasPrefix(kept[0], PartialPrefix) || !strings.HasSuffix(kept[0], tt.kind) {
					t.Fatalf("inbox holds %v, want one partial-*%s file", kept, tt.kind)
				}
				p := filepath.Join(dir, kept[0])
				want := fmt.Sprintf("not a regular file: left as it is (move it away); all that was read is kept as %s (%d bytes), not applied: it is whole",
					p, len(tt.content))
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q\nlacks %q", err, want)
				}
				if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, tt.content) {
					t.Fatalf("kept %d bytes (%v), want the %d read", len(b), err, len(tt.content))
				}
				if got, err := Salvage(dir, sp.ext); err != nil || len(got) != 0 {
					t.Fatalf("Salvage: %v, %v", got, err)
				}
			})
		}
	}
}
