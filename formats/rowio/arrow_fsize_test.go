package rowio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/schema"
)

// TestArrowStreamFileSizeLimit: an Arrow stream written into a regular
// file under a file size limit (ulimit -f, RLIMIT_FSIZE) stops as at a
// full disk: the batch that would pass the limit is refused whole with a
// FullError (capture and fetch exit 3), and Close ends the stream after
// the batches that fit. fallocate(2) with KEEP_SIZE does not check the
// limit on ext4 or xfs, so the reservation used to succeed and the
// batch's write then failed with EFBIG mid-message (capture: exit 1, the
// stream cut). Go ignores the SIGXFSZ that comes with a write past it.
func TestArrowStreamFileSizeLimit(t *testing.T) {
	smallReservations(t)
	for _, tc := range []struct {
		name  string
		limit uint64
	}{
		{"limit past the first reservations", 1 << 20},
		{"limit just past the first reservation", uint64(reserveSlack + reserveAhead + 100<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "obs.arrows")
			f, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var old unix.Rlimit
			if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
				t.Fatal(err)
			}
			lim := old
			lim.Cur = min(tc.limit, old.Max)
			if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
				t.Skipf("cannot set RLIMIT_FSIZE: %v", err)
			}
			defer unix.Setrlimit(unix.RLIMIT_FSIZE, &old)

			w := NewArrowWriter[schema.Observation](out, f)
			if err := w.Reserve(); err != nil {
				t.Fatalf("first reservation: %v", err)
			}
			rows := randomObservations(2000)
			written := 0
			var werr error
			for range 200 { // ~100 KB a batch: 20 MB, far past the limit
				if werr = w.Write(rows); werr != nil {
					break
				}
				written += len(rows)
			}
			if werr == nil || !errors.Is(werr, ErrOutputFull) {
				t.Fatalf("after %d rows: write error %v, want an ErrOutputFull", written, werr)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close after the limit: %v", err)
			}
			unix.Setrlimit(unix.RLIMIT_FSIZE, &old)
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if uint64(fi.Size()) > lim.Cur {
				t.Errorf("the file is %d bytes, past the limit %d", fi.Size(), lim.Cur)
			}
			rf, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer rf.Close()
			r, err := OpenArrow[schema.Observation](out, rf)
			if err != nil {
				t.Fatal(err)
			}
			r.RequireEndMarker()
			got, err := r.ReadAll()
			if err != nil {
				t.Fatalf("the stream is not whole: %v", err)
			}
			if len(got) != written || written == 0 {
				t.Errorf("the stream holds %d rows, %d were taken (want the same, above 0)", len(got), written)
			}
		})
	}
}
