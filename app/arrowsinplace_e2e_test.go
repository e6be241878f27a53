package app

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestArrowsNameInPlace: -o FILE named *.arrows that is a FIFO, or a
// link to a device (/dev/stdout, a null device), is written an Arrow stream
// as -o - would be, not Parquet (which needs a file it can rename into
// place); a FIFO named otherwise still gets Parquet.
func TestArrowsNameInPlace(t *testing.T) {
	bin := infohashBinary(t)
	jobs := filepath.Join(t.TempDir(), "jobs.txt")
	if err := os.WriteFile(jobs, []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	capture := func(out string) []string {
		return []string{"capture", "--bootstrap", "", "--passive", "--dht-listen", "127.0.0.1:0", "--duration", "1s",
			"--dht-state", filepath.Join(t.TempDir(), "state"), "-o", out}
	}
	fetch := func(out string) []string {
		return []string{"fetch", "--no-dht", "--dht-listen", "127.0.0.1:0", jobs, "-o", out}
	}
	for _, tc := range []struct {
		name  string
		file  string // what -o names: a FIFO, or a link to a device
		to    string // the link's target ("": a FIFO; "null": fsutiltest.NullDevice)
		args  func(out string) []string
		arrow bool // an Arrow stream, else Parquet
		rows  int  // read back from the FIFO or stdout
	}{
		{"capture, FIFO", "obs.arrows", "", capture, true, 0},
		{"capture, FIFO, any case", "obs.ARROW", "", capture, true, 0},
		{"capture, FIFO named .parquet", "obs.parquet", "", capture, false, 0},
		{"capture, link to /dev/stdout", "obs.arrows", "/dev/stdout", capture, true, 0},
		{"capture, link to a null device", "obs.arrows", "null", capture, true, -1},
		{"fetch, FIFO", "res.arrows", "", fetch, true, 1},
		{"fetch, link to /dev/stdout", "res.arrows", "/dev/stdout", fetch, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tc.file)
			var err error
			switch tc.to {
			case "":
				err = syscall.Mkfifo(out, 0o600)
			case "null":
				err = os.Symlink(fsutiltest.NullDevice(t), out)
			default:
				err = os.Symlink(tc.to, out)
			}
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			got := make(chan []byte, 1)
			if tc.to == "" {
				go func() {
					f, err := os.Open(out) // blocks until the writer opens it
					if err != nil {
						got <- nil
						return
					}
					defer f.Close()
					b, _ := io.ReadAll(f)
					got <- b
				}()
			}
			c := exec.Command(bin, tc.args(out)...)
			c.Stdout, c.Stderr = &stdout, &stderr
			if code := exitCode(c.Run()); code != 0 {
				t.Fatalf("%s: exit %d; stderr:\n%s", tc.name, code, stderr.String())
			}
			b := stdout.Bytes()
			if tc.to == "" {
				b = <-got
			}
			if tc.rows < 0 {
				return // a null device: it ran
			}
			if arrow := bytes.HasPrefix(b, arrowMagic); arrow != tc.arrow {
				t.Fatalf("-o %s wrote %.8q: an Arrow stream %v, want %v", tc.file, b, arrow, tc.arrow)
			}
			if !tc.arrow {
				return
			}
			n, err := streamRows(t, tc.file, b)
			if err != nil || n != tc.rows {
				t.Fatalf("-o %s: a stream of %d rows (%v), want a whole one of %d", tc.file, n, err, tc.rows)
			}
		})
	}
}

// streamRows reads the whole Arrow stream b of observations (name:
// obs.*) or results, end marker required, and counts its rows.
func streamRows(t *testing.T, name string, b []byte) (int, error) {
	t.Helper()
	if strings.HasPrefix(name, "obs") {
		r, err := rowio.OpenArrow[schema.Observation](name, bytes.NewReader(b))
		if err != nil {
			return 0, err
		}
		defer r.Close()
		r.RequireEndMarker()
		rows, err := r.ReadAll()
		return len(rows), err
	}
	r, err := rowio.OpenArrow[schema.Result](name, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	defer r.Close()
	r.RequireEndMarker()
	rows, err := r.ReadAll()
	return len(rows), err
}
