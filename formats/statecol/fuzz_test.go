package statecol_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// FuzzReadStateFile: a damaged state file (bit rot, a truncated copy, a
// foreign dataset given to merge) must read as an error, never a panic,
// and never as more rows than its footer says. Splice over it must do the
// same. A file whose pages' CRCs do not match is read again with matching
// ones (rowiotest.FixPageCRCs), as a crafted file would have them: else
// the CRC check would stop every change to a page before its decoders.
func FuzzReadStateFile(f *testing.F) {
	rowio.FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	addStateSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		rowiotest.AsIsAndFixed(t, data, readUntrusted)
	})
}

// readUntrusted is FuzzReadStateFile's check of one file.
func readUntrusted(t *testing.T, data []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "state.parquet")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := statecol.ReadUntrustedStateFile(rowio.UnrecordedFile(p))
	if err == nil {
		src, err := statecol.OpenUntrusted(rowio.UnrecordedFile(p))
		if err != nil {
			t.Fatalf("read %d rows, then Open failed: %v", len(rows), err)
		}
		defer src.Close()
		if int64(len(rows)) != src.NumRows() {
			t.Fatalf("read %d rows of a file of %d", len(rows), src.NumRows())
		}
		checkParquetGo(t, data, rows)
		// The optional columns in need take the selection's
		// level-counting path (picks) on every page; the changed ones
		// are transcoded from their old pages (INT64, optional INT64 and
		// string, INT32).
		need := statecol.ColumnsNamed("last_seen", "seen_count", "next_retry", "last_attempt", "last_failure",
			"info_hash_v2", "tier", "attempts")
		_ = statecol.Splice(io.Discard, src, need,
			func(first, n int64) []int32 {
				if n > 1 {
					return []int32{0, int32(n / 2), int32(n - 1)}
				}
				return []int32{0}
			},
			func(first int64, sel []int32, st []schema.State) (statecol.Columns, error) {
				st[0].SeenCount++
				st[0].Attempts++
				st[len(st)-1].NextRetry = 0
				st[len(st)-1].LastFailure = "a_failure_no_row_had"
				return statecol.ColumnsNamed("seen_count", "attempts", "next_retry", "last_failure"), nil
			})
	}
}

// addStateSeeds adds a state file of 300 rows to f's corpus, with bytes
// flipped here and there, and cut in half.
func addStateSeeds(f *testing.F) {
	var good bytes.Buffer
	if err := statecol.WriteState(&good, sample(300)); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	for _, at := range []int{4, 100, good.Len() / 2, good.Len() - 40, good.Len() - 9} {
		b := bytes.Clone(good.Bytes())
		b[at] ^= 0x41
		f.Add(b)
	}
	f.Add(good.Bytes()[:good.Len()/2])
}

// FuzzReadTrustedStateFile: the dataset's own state files are read
// without the page header checks (Open, ReadStateFile, ReadState), which
// cost time on every pass. Such a file can still be damaged on disk (bit
// rot, a torn copy): it must read as an error, never a panic, nor make
// the reader allocate much where the untrusted reader's checks would have
// refused the file. What the untrusted reader reads, the trusted one must
// read alike.
//
// A file whose pages' CRCs do not match is read again with those CRCs
// cleared (rowiotest.ClearPageCRCs), as pages without a CRC, which the
// trusted reader checks in full: else the CRC check would stop every
// change to a page before its decoders. A fixed CRC would make it skip
// those checks on a crafted page, which its own files do not have.
func FuzzReadTrustedStateFile(f *testing.F) {
	rowio.FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	addStateSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		readTrusted(t, data)
		if cleared, n := rowiotest.ClearPageCRCs(data); n > 0 {
			t.Logf("read again with the CRCs of %d pages cleared", n)
			readTrusted(t, cleared)
		}
	})
}

// readTrusted is FuzzReadTrustedStateFile's check of one file.
func readTrusted(t *testing.T, data []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "state.parquet")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := allocated()
	rows, err := statecol.ReadStateFile(rowio.UnrecordedFile(p))
	grew := allocated() - before
	if err != nil && (strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), p+": ")) {
		t.Fatalf("error not one line naming the file: %q", err)
	}
	urows, uerr := statecol.ReadUntrustedStateFile(rowio.UnrecordedFile(p))
	switch {
	case uerr == nil && err != nil:
		t.Fatalf("the untrusted reader read %d rows, the trusted one failed: %v", len(urows), err)
	case uerr == nil && !reflect.DeepEqual(rows, urows):
		t.Fatalf("the trusted reader read other rows (%d) than the untrusted one (%d)", len(rows), len(urows))
	case uerr != nil && grew > maxDamagedAlloc:
		t.Fatalf("the trusted reader allocated %d MiB (%v) on a file the untrusted one refuses: %v", grew>>20, err, uerr)
	}
	n := 0
	serr := statecol.ReadState(rowio.UnrecordedFile(p), func(st []schema.State) error { n += len(st); return nil })
	if (serr == nil) != (err == nil) || (err == nil && n != len(rows)) {
		t.Fatalf("ReadState: %d rows, %v; ReadStateFile: %d rows, %v", n, serr, len(rows), err)
	}
}

// maxDamagedAlloc bounds what reading a damaged state file may allocate
// (a 300-row state file takes about 1 MiB to read).
const maxDamagedAlloc = 64 << 20

// allocated is the bytes allocated so far by the program.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// TestPatchedCRCsReachDecoders: whichever byte of a state file is
// flipped, the fuzz targets' second read (FixPageCRCs for the untrusted
// reader, ClearPageCRCs for the trusted one) meets no page CRC mismatch,
// where the first read of some flips stops at one.
func TestPatchedCRCsReachDecoders(t *testing.T) {
	var good bytes.Buffer
	if err := statecol.WriteState(&good, sample(300)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "state.parquet")
	read := func(b []byte, untrusted bool) error {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		if untrusted {
			_, err = statecol.ReadUntrustedStateFile(rowio.UnrecordedFile(p))
		} else {
			_, err = statecol.ReadStateFile(rowio.UnrecordedFile(p))
		}
		return err
	}
	crcErr := func(err error) bool { return err != nil && strings.Contains(err.Error(), "checksum mismatch") }
	for _, tc := range []struct {
		name      string
		untrusted bool
		patch     func([]byte) ([]byte, int)
	}{
		{"untrusted, fixed", true, rowiotest.FixPageCRCs},
		{"trusted, cleared", false, rowiotest.ClearPageCRCs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flips, stopped, patched := 0, 0, 0
			for at := 4; at < good.Len()-8; at += 97 {
				flips++
				b := bytes.Clone(good.Bytes())
				b[at] ^= 0x10
				if crcErr(read(b, tc.untrusted)) {
					stopped++
				}
				fixed, n := tc.patch(b)
				if n == 0 {
					continue
				}
				patched++
				if err := read(fixed, tc.untrusted); crcErr(err) {
					t.Fatalf("byte %d flipped, %d pages patched: %v", at, n, err)
				}
			}
			if stopped == 0 || patched < stopped {
				t.Fatalf("%d flips stopped at a page CRC, %d patched", stopped, patched)
			}
			t.Logf("%d of %d flips stopped at a page CRC, %d patched", stopped, flips, patched)
		})
	}
}
