// Package inputdirtest builds the inputs that the tests of dedup and
// merge name: a folder as a crawl pass finds it while a producer still
// writes into it, and inputs that hold nothing to apply.
package inputdirtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
)

// Stream is rows as an Arrow IPC stream written in batches of per rows,
// as capture and fetch write one (-o -), and the offset where each batch
// ends in it: stream[:ends[i]+k], for k short of a batch, is the stream
// of its writer killed while writing batch i+1.
func Stream[T any](t testing.TB, rows []T, per int) (stream []byte, ends []int) {
	t.Helper()
	var buf bytes.Buffer
	w := rowio.NewArrowWriter[T]("test", &buf)
	for lo := 0; lo < len(rows); lo += per {
		if err := w.Write(rows[lo:min(lo+per, len(rows))]); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, buf.Len())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), ends
}

// Contents are the input files of a Folder.
type Contents struct {
	Parquet []byte // a Parquet file: a.parquet
	Whole   []byte // a whole Arrow stream: b.arrows
	Cut     []byte // a stream cut mid-message (Stream's ends): sub/C.ARROW
	Busy    []byte // a stream its writer still writes into: d.arrows
}

// Folder is a folder named as an input while a producer still writes
// into one of its streams.
type Folder struct {
	Dir  string // the folder
	Cut  string // the cut stream's path
	Busy string // the path of the stream still being written
	held *fsutil.StreamFile
}

// Build writes c into a new folder, beside three files a folder is not
// read for: notes.txt, e.arrows.bak, and .tmp-f.arrows-1, a temporary
// file of a write in progress (fsutil.TempPrefix). Busy's writer lock is
// held as its writer holds it (fsutil.HoldStream), until Release or the
// end of the test.
func Build(t testing.TB, c Contents) *Folder {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &Folder{Dir: dir, Cut: filepath.Join(dir, "sub", "C.ARROW"), Busy: filepath.Join(dir, "d.arrows")}
	for name, b := range map[string][]byte{
		"a.parquet":                      c.Parquet,
		"b.arrows":                       c.Whole,
		"sub/C.ARROW":                    c.Cut,
		"d.arrows":                       c.Busy,
		"notes.txt":                      []byte("not an input\n"),
		"e.arrows.bak":                   []byte("junk"),
		fsutil.TempPrefix + "f.arrows-1": []byte("half"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := os.OpenFile(f.Busy, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if f.held, err = fsutil.HoldStream(w, 0); err != nil || f.held == nil {
		t.Fatalf("locking %s as its writer: %v", f.Busy, err)
	}
	t.Cleanup(f.Release)
	return f
}

// Release drops Busy's writer lock, as its writer does once done.
func (f *Folder) Release() {
	f.held.Close()
	f.held = nil
}

// Nothing makes in dir the inputs that hold nothing to apply, and
// returns their paths by what they are: "empty", a folder that holds no
// file, named with a trailing slash as a cron line names it; "list", a
// folder that holds only notes.txt; "blank", an empty file blank.parquet;
// "missing", a path where nothing is; "-", stdin.
func Nothing(t testing.TB, dir string) map[string]string {
	t.Helper()
	paths := map[string]string{"empty": filepath.Join(dir, "empty") + "/", "list": filepath.Join(dir, "list"),
		"blank": filepath.Join(dir, "blank.parquet"), "missing": filepath.Join(dir, "missing"), "-": "-"}
	for _, d := range []string{"empty", "list"} {
		if err := os.Mkdir(paths[d], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(paths["list"], "notes.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths["blank"], nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return paths
}
