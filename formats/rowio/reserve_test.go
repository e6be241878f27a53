package rowio

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/schema"
)

// randomObservations are observations whose hashes do not compress, as
// a real capture's.
func randomObservations(n int) []schema.Observation {
	rows := observations(0, n)
	for i := range rows {
		rand.Read(rows[i].InfoHash[:])
	}
	return rows
}

// smallReservations makes the reservations small, so that a test sees
// them grow; reserveSlack still covers 64 rows, and leaves room beyond
// tightMargin.
func smallReservations(t *testing.T) {
	t.Helper()
	slack, ahead := reserveSlack, reserveAhead
	reserveSlack, reserveAhead = 256<<10, 64<<10
	t.Cleanup(func() { reserveSlack, reserveAhead = slack, ahead })
}

// TestReserveKeepsTheBytes: a Parquet output that reserves its space
// holds, once closed, exactly the bytes of one that does not; while it is
// written its reservation grows ahead of what finishing it would take.
func TestReserveKeepsTheBytes(t *testing.T) {
	smallReservations(t)
	advance := fakeClock(t)
	rows := randomObservations(40_000)
	dir := t.TempDir()
	write := func(name string, reserve bool) []byte {
		t.Helper()
		out := filepath.Join(dir, name)
		w, err := Create[schema.Observation](out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if reserve {
			if err := w.Reserve(); err != nil {
				t.Fatal(err)
			}
		}
		var grew []int64
		for i := 0; i < len(rows); i += 1000 {
			if err := w.Write(rows[i : i+1000]); err != nil {
				t.Fatal(err)
			}
			advance(FlushInterval / 4) // a row group every 4 writes
			if !reserve {
				continue
			}
			p := w.pw
			if got := w.file.Reserved(); got < p.need+reserveSlack || got < p.out.n {
				t.Fatalf("after %d rows: reserved %d, less than the %d needed plus %d slack (written %d)", i+1000, got, p.need, reserveSlack, p.out.n)
			}
			if fi, err := w.file.Stat(); err != nil || fi.Size() != w.file.Reserved() {
				t.Fatalf("the temporary file is %v bytes, reserved %d (%v)", fi.Size(), w.file.Reserved(), err)
			}
			if len(grew) == 0 || grew[len(grew)-1] != w.file.Reserved() {
				grew = append(grew, w.file.Reserved())
			}
		}
		if reserve && len(grew) < 5 {
			t.Errorf("the reservation took only the sizes %v", grew)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plain, reserved := write("plain.parquet", false), write("reserved.parquet", true)
	if !bytes.Equal(plain, reserved) {
		t.Fatalf("with reservations the file is %d bytes, without %d, and they differ", len(reserved), len(plain))
	}
}

// fakeDisk reserves up to free bytes, then fails with ENOSPC.
type fakeDisk struct {
	free, reserved int64
	calls          int
}

func (d *fakeDisk) Reserve(total int64) error {
	d.calls++
	if total > d.free {
		return &os.PathError{Op: "fallocate", Path: "fake", Err: unix.ENOSPC}
	}
	d.reserved = max(d.reserved, total)
	return nil
}

// TestReserveStopsAtAFullDisk: once the disk cannot give a reservation,
// Write says so (ErrOutputFull, wrapping ENOSPC) having taken only rows
// that fit, later rows are taken only while they fit in what was
// reserved, and the file closed is whole, readable and within it. With no
// room for the first reservation, nothing is written.
func TestReserveStopsAtAFullDisk(t *testing.T) {
	smallReservations(t)
	for _, c := range []struct {
		name string
		free int64
		blob int // bytes of info_bytes per result row
	}{
		{"small rows", 600 << 10, 0},
		{"blob rows", 3 << 20, 200 << 10},
		{"one blob too big", 1 << 20, 2 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			disk := &fakeDisk{free: c.free}
			var out bytes.Buffer
			p := NewParquetWriter[schema.Result](&out)
			if err := p.startReserving("results.parquet", disk); err != nil {
				t.Fatal(err)
			}
			kept, calls := 0, 0
			var err error
			for err == nil && kept < 1_000_000 {
				batch := make([]schema.Result, 100)
				for i := range batch {
					rand.Read(batch[i].InfoHash[:])
					batch[i].Outcome, batch[i].PeerFailures = schema.OutcomeOK, []schema.PeerFailure{}
					if c.blob > 0 {
						batch[i].InfoBytes = make([]byte, c.blob)
						rand.Read(batch[i].InfoBytes)
					}
				}
				var n int
				n, err = p.Write(batch)
				kept += n
				calls++
			}
			if !errors.Is(err, ErrOutputFull) || !errors.Is(err, unix.ENOSPC) || !fsutil.IsNoSpace(err) {
				t.Fatalf("after %d rows: %v; want ErrOutputFull with ENOSPC", kept, err)
			}
			// The released rows of a stopped fetch: taken while they fit.
			more, err := p.Write(make([]schema.Result, 100_000))
			if !errors.Is(err, ErrOutputFull) || more == 0 {
				t.Errorf("after the stop %d small rows were taken (%v); want some, then ErrOutputFull", more, err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if int64(out.Len()) > disk.reserved {
				t.Fatalf("the file is %d bytes, only %d were reserved", out.Len(), disk.reserved)
			}
			path := filepath.Join(t.TempDir(), "r.parquet")
			if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			pr, err := Open[schema.Result](path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			got, err := pr.ReadAll()
			if err != nil || len(got) != kept+more {
				t.Fatalf("read back %d rows (%v), want %d", len(got), err, kept+more)
			}
			t.Logf("kept %d rows + %d small ones in %d bytes of %d reserved (%d free)", kept, more, out.Len(), disk.reserved, c.free)
		})
	}
	t.Run("no room to start", func(t *testing.T) {
		p := NewParquetWriter[schema.Observation](new(bytes.Buffer))
		err := p.startReserving("obs.parquet", &fakeDisk{free: 100 << 10})
		if !errors.Is(err, ErrOutputFull) || !errors.Is(err, unix.ENOSPC) {
			t.Fatalf("%v; want ErrOutputFull with ENOSPC", err)
		}
	})
}
