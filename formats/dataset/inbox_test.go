package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/sniff/snifftest"
)

// arrowBatches is an Arrow stream of n batches of 3 observations, and
// the stream's length after each batch.
func arrowBatches(t *testing.T, n int) ([]byte, []int) {
	t.Helper()
	var buf bytes.Buffer
	w := rowio.NewArrowWriter[schema.Observation]("test", &buf)
	var ends []int
	for b := range n {
		rows := make([]schema.Observation, 3)
		for i := range rows {
			rows[i].InfoHash[0], rows[i].InfoHash[1] = byte(b), byte(i)
			rows[i].HashType, rows[i].ObservedAt, rows[i].Source = schema.HashV1, int64(b*10+i), schema.SourceGetPeers
		}
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, buf.Len())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), ends
}

func TestSalvage(t *testing.T) {
	stream, ends := arrowBatches(t, 3)
	gz := snifftest.Gzip(t, bytes.Repeat([]byte("0123456789abcdef0123456789abcdef01234567\n"), 50))
	for _, tc := range []struct {
		name    string
		content []byte
		locked  bool   // a live writer holds the spool
		young   bool   // the spool's mtime is now (else an hour ago)
		want    string // "" nothing set aside; else the kind of the partial file
		wantLen int    // its length
		left    string // what else stays in the folder: "", "temp", "bad"
		marked  bool   // named by fsutil.CreateLocked after it was locked
	}{
		{"arrow cut in the third batch", stream[:ends[2]-5], false, false, ".arrow", ends[1] + 8, "", false},
		{"arrow cut in the first batch", stream[:ends[0]-5], false, false, "", 0, "", false},
		{"text cut mid-line", []byte("aa\nbb\ncc"), false, false, ".txt", 6, "", false},
		{"text without a whole line", []byte("abc"), false, false, "", 0, "", false},
		{"empty", nil, false, false, "", 0, "", false},
		{"empty, just created, not locked yet", nil, false, true, "", 0, "temp", false},
		// Locked before it had a name: unlocked, its writer is gone.
		{"empty, just created, locked at birth", nil, false, true, "", 0, "", true},
		{"empty, locked at birth, live writer", nil, true, true, "", 0, "temp", true},
		{"parquet cut short", []byte("PAR1xxxxxxxx"), false, false, "", 0, "bad", false},
		// All of it, as compressed: it was cut at a newline byte, or removed, as text.
		{"gzip cut short", gz[:len(gz)-3], false, false, ".gz", len(gz) - 3, "", false},
		{"live writer", stream[:ends[2]-5], true, true, "", 0, "temp", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tmp := filepath.Join(dir, fsutil.TempPrefix+"x.spool-123")
			if tc.marked {
				tmp = filepath.Join(dir, fsutil.TempPrefix+"x.spool-L0a0b0c")
			}
			if err := os.WriteFile(tmp, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
			if !tc.young {
				old := time.Now().Add(-time.Hour)
				if err := os.Chtimes(tmp, old, old); err != nil {
					t.Fatal(err)
				}
			}
			if tc.locked {
				f, err := os.Open(tmp)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Salvage(dir, ".spool")
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("set aside %v, want nothing", got)
				}
			} else {
				if len(got) != 1 || !strings.HasPrefix(filepath.Base(got[0]), PartialPrefix) || !strings.HasSuffix(got[0], tc.want) {
					t.Fatalf("set aside %v, want one %s%s file", got, PartialPrefix, tc.want)
				}
				b, err := os.ReadFile(got[0])
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != tc.wantLen {
					t.Fatalf("kept %d bytes, want %d", len(b), tc.wantLen)
				}
				if tc.want == ".arrow" {
					r, err := rowio.OpenArrow[schema.Observation]("partial", bytes.NewReader(b))
					if err != nil {
						t.Fatal(err)
					}
					out, _ := r.ReadAll()
					r.Close()
					if k := len(out); k != 6 {
						t.Fatalf("the partial stream holds %d rows, want the 6 of two whole batches", k)
					}
				}
			}
			ents, _ := os.ReadDir(dir)
			var left []string
			for _, e := range ents {
				if !strings.HasPrefix(e.Name(), PartialPrefix) {
					left = append(left, e.Name())
				}
			}
			switch tc.left {
			case "":
				if len(left) != 0 {
					t.Fatalf("left %v behind", left)
				}
			case "temp":
				if len(left) != 1 || left[0] != filepath.Base(tmp) {
					t.Fatalf("a live writer's spool was touched: %v", left)
				}
			case "bad":
				if len(left) != 1 || !strings.HasSuffix(left[0], ".bad") {
					t.Fatalf("left %v, want the spool set aside as .bad", left)
				}
			}
			// The next run's Salvage changes nothing.
			if again, err := Salvage(dir, ".spool"); err != nil || len(again) != 0 {
				t.Fatalf("Salvage again: %v, %v", again, err)
			}
			if after, _ := os.ReadDir(dir); len(after) != len(ents) {
				t.Fatalf("Salvage again made %v of %v", after, ents)
			} else {
				for i := range after {
					if after[i].Name() != ents[i].Name() {
						t.Fatalf("Salvage again made %v of %v", after, ents)
					}
				}
			}
		})
	}
}

// TestSpoolHoldsItsLock: a spool being written is locked (and empty
// before that), so that Salvage run by another process at any instant
// leaves it alone.
func TestSpoolHoldsItsLock(t *testing.T) {
	dir := t.TempDir()
	for i := range 200 {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		var path string
		go func() {
			var err error
			path, err = Spool(dir, ".spool", pr)
			done <- err
		}()
		if i%2 == 0 { // sometimes before, sometimes after the first bytes
			pw.Write([]byte("aa\nbb\n"))
		}
		if got, err := Salvage(dir, ".spool"); err != nil || len(got) != 0 {
			t.Fatalf("salvaged a live spool: %v %v", got, err)
		}
		if i%2 == 1 {
			pw.Write([]byte("aa\nbb\n"))
		}
		pw.Close()
		if err := <-done; err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != "aa\nbb\n" {
			t.Fatalf("round %d: spool holds %q, %v", i, b, err)
		}
		pr.Close()
	}
}
