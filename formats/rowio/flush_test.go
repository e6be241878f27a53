package rowio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/schema"
)

// fakeClock replaces now for the test; advance moves it on.
func fakeClock(t *testing.T) (advance func(time.Duration)) {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now = func() time.Time { return at }
	t.Cleanup(func() { now = time.Now })
	return func(d time.Duration) { at = at.Add(d) }
}

// observations returns n observations numbered from first.
func observations(first, n int) []schema.Observation {
	rows := make([]schema.Observation, n)
	for i := range rows {
		rows[i] = schema.Observation{InfoHash: schema.Hash{byte(first + i), byte((first + i) >> 8)}, HashType: schema.HashV1,
			ObservedAt: int64(first + i), Source: schema.SourceAnnouncePeer, NodeAddr: "127.0.0.1:6881", RunID: "r"}
	}
	return rows
}

// TestRowsReachTheFileWithinFlushInterval: the rows of a user's Parquet
// output reach its (temporary) file once the oldest of them has waited
// FlushInterval, not only when a row group fills or at Close, and the
// file, of several row groups, reads back whole.
func TestRowsReachTheFileWithinFlushInterval(t *testing.T) {
	advance := fakeClock(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "obs.parquet")
	w, err := Create[schema.Observation](out, nil)
	if err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		t.Helper()
		temps, _ := filepath.Glob(filepath.Join(dir, fsutil.TempPrefix+"*"))
		if len(temps) != 1 {
			t.Fatalf("temporary files %v, want one", temps)
		}
		fi, err := os.Stat(temps[0])
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	var sizes []int64
	for i := range 3 {
		if err := w.Write(observations(i*10, 5)); err != nil {
			t.Fatal(err)
		}
		advance(FlushInterval - time.Second)
		if err := w.Write(observations(i*10+5, 5)); err != nil {
			t.Fatal(err)
		}
		before := size()
		advance(time.Second)
		if err := w.Write(observations(i*10+10, 0)); err != nil { // no rows: no flush
			t.Fatal(err)
		}
		if err := w.Write(observations(1000+i, 1)); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, size())
		if sizes[i] <= before+100 {
			t.Fatalf("pass %d: the file grew from %d to %d bytes once the rows waited %s, want their row group in it",
				i, before, sizes[i], FlushInterval)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open[schema.Observation](out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.ReadAll()
	if err != nil || len(got) != 33 {
		t.Fatalf("read back %d rows (%v), want 33", len(got), err)
	}
}

// TestWriteErrorSurfacesWithinFlushInterval: a full disk (/dev/full,
// written in place) or a file that can no longer be written fails Write
// once the rows are due out, not only Close at the end of the run; the
// error names the output and says what became of it, and a regular
// file's temporary file is removed.
func TestWriteErrorSurfacesWithinFlushInterval(t *testing.T) {
	for _, tt := range []struct {
		name string
		full bool // /dev/full; else a regular file whose descriptor is closed under the writer
		want string
	}{
		{name: "full device", full: true, want: "/dev/full: write /dev/full: no space left on device (the stream on /dev/full is cut short)"},
		{name: "regular file", want: "file already closed (nothing was kept at "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			advance := fakeClock(t)
			dir := t.TempDir()
			out := filepath.Join(dir, "obs.parquet")
			if tt.full {
				if _, err := os.Stat("/dev/full"); err != nil {
					t.Skipf("no /dev/full: %v", err)
				}
				out = "/dev/full"
			}
			var opened *fsutil.File
			w, err := CreateWith[schema.Observation](func(p string) (*fsutil.File, error) {
				f, err := fsutil.CreateOutput(p)
				opened = f
				return f, err
			}, out, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(observations(0, 100)); err != nil {
				t.Fatal(err)
			}
			if !tt.full {
				opened.File.Close() // every later write fails
			}
			advance(FlushInterval)
			err = w.Write(observations(100, 1))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write once the rows are due: %v, want %q", err, tt.want)
			}
			if again := w.Write(observations(101, 1)); again == nil || again.Error() != err.Error() {
				t.Fatalf("the next Write: %v, want the same error", again)
			}
			if cerr := w.Close(); cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("Close: %v, want the same error", cerr)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("left %v", ents)
			}
		})
	}
}
