package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
)

// fuzzTables are the tables FuzzReadTableFile reads, in the order of the
// byte that picks one: each is read as its row type by ReadFile (the
// ledger also by its own reader, readLedgerFile).
var fuzzTables = []string{TableLeases, TablePeers, TableLedger, TableTorrents}

// FuzzReadTableFile: a damaged file of the leases, peers, ledger or
// torrents table (bit rot, a torn copy, another dataset given to merge
// --from) reads as rows or as one line of error naming the file: never a
// panic, and never an allocation far beyond what the file holds. The
// first byte picks the table, the rest is the file. A file whose pages'
// CRCs do not match is read again with matching ones
// (rowiotest.FixPageCRCs), as a crafted file would have them: else the
// CRC check would stop every change to a page before its decoders.
//
// Each file is read twice: as a file no manifest records (ReadFile), and
// as a snapshot's reader reads it (ReadDataFile), against the footer sum
// the manifest recorded of the intact seed file of that table, so that
// FooterSum.Check meets damaged files too (readTableFile says what each
// read must give).
func FuzzReadTableFile(f *testing.F) {
	rowio.FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	files, sums := committedTableFiles(f)
	for i, b := range files {
		s := append([]byte{byte(i)}, b...)
		f.Add(s)
		f.Add(s[:len(s)/2])
		for _, at := range []int{5, len(s) / 3, len(s) / 2, len(s) - 40, len(s) - 9} {
			c := bytes.Clone(s)
			c[at] ^= 0x41
			f.Add(c)
		}
	}
	dir := f.TempDir()
	d := &Dataset{Dir: dir, readOnly: true}
	lt := &Table{Dir: "ledger", Partitions: map[string][]FileInfo{}}
	if err := os.MkdirAll(filepath.Join(dir, lt.Dir), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		i := int(data[0]) % len(fuzzTables)
		table, body := fuzzTables[i], data[1:]
		readTableFile(t, d, lt, table, body, sums[i])
		if fixed, n := rowiotest.FixPageCRCs(body); n > 0 {
			t.Logf("read again with the CRCs of %d pages fixed", n)
			readTableFile(t, d, lt, table, fixed, sums[i])
		}
	})
}

// readTableFile is FuzzReadTableFile's check of one file (body) of the
// table named table, as the file of the ledger table lt of d. It reads
// body as no manifest's file, then as a snapshot's file whose manifest
// entry records the footer sum recorded: when body's last recorded.Size
// bytes do not match that sum, that read must fail with a
// *rowio.FooterError; when they do, it must read what the first read did
// (the same rows, the same error), through the checked copy of the footer
// that FooterSum.Check serves.
func readTableFile(t *testing.T, d *Dataset, lt *Table, table string, body []byte, recorded rowio.FooterSum) {
	t.Helper()
	fi := FileInfo{Name: "part-1.parquet", Size: int64(len(body)), CRC32C: crc32.Checksum(body, castagnoli)}
	p := d.FilePath(lt, "", fi)
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	before := allocated()
	reads := 2
	n, err := readTableAs(table, rowio.UnrecordedFile(p))
	rfi := fi
	rfi.FooterSize, rfi.FooterCRC32C = recorded.Size, recorded.CRC32C
	rn, rerr := readTableAs(table, d.dataFile(lt, "", rfi))
	if table == TableLedger {
		// The ledger's reader, given a manifest entry that matches
		// the file (size, CRC-32C, and the rows ReadFile found), as
		// merge --from gets from the other dataset's manifest.
		fi.Rows = int64(n)
		reads++
		if _, lerr := readLedgerFile(d, lt, fi); lerr != nil {
			oneLine(t, lerr, p)
		}
	}
	if grew := allocated() - before; grew > uint64(reads)*maxTableAlloc(len(body)) {
		t.Fatalf("reading a %d-byte %s file allocated %d MiB (%v)", len(body), table, grew>>20, err)
	}
	if err != nil {
		oneLine(t, err, p)
		if !strings.HasPrefix(err.Error(), p+": ") {
			t.Fatalf("error does not start with the file: %q", err)
		}
	}
	size := recorded.Size
	if size > int64(len(body)) || crc32.Checksum(body[int64(len(body))-size:], castagnoli) != recorded.CRC32C {
		if fe := (*rowio.FooterError)(nil); !errors.As(rerr, &fe) || rn != 0 {
			t.Fatalf("footer does not match the recorded sum %+v: read %d rows, %v; want a FooterError", recorded, rn, rerr)
		}
		oneLine(t, rerr, p)
		return
	}
	if rn != n || fmt.Sprint(rerr) != fmt.Sprint(err) {
		t.Fatalf("footer matches the recorded sum: read %d rows, %v; unrecorded, %d rows, %v", rn, rerr, n, err)
	}
}

// readTableAs reads every row of df as the row type of table.
func readTableAs(table string, df rowio.DataFile) (int, error) {
	var rows int
	var err error
	switch table {
	case TableLeases:
		var r []schema.Lease
		r, err = readFile[schema.Lease](df)
		rows = len(r)
	case TablePeers:
		var r []schema.PeerPenalty
		r, err = readFile[schema.PeerPenalty](df)
		rows = len(r)
	case TableTorrents:
		var r []schema.Torrent
		r, err = readFile[schema.Torrent](df)
		rows = len(r)
	default:
		var r []ledgerRow
		r, err = readFile[ledgerRow](df)
		rows = len(r)
	}
	return rows, err
}

// oneLine fails t unless err is one line that names the file at p.
func oneLine(t *testing.T, err error, p string) {
	t.Helper()
	if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), p+": ") {
		t.Fatalf("error not one line naming the file: %q", err)
	}
}

// maxTableAlloc bounds what reading a table file of n bytes once may
// allocate: reading the seeds takes under 2 MiB. It leaves room for
// zstdWindow, which rowio's page checks can take for a few bytes of
// input, but not for row buffers sized from what a footer claims.
func maxTableAlloc(n int) uint64 { return 64<<20 + 64*uint64(n) + zstdWindow(n) }

// zstdWindow is what rowio's page checks may allocate for the zstd frames
// of a file of n bytes: they decode a frame with the window it declares,
// which may be 8 MiB (rowio's minZstdWindow) or the page's size, and a
// page's size is at most what its blocks hold (128 KiB for a 4-byte RLE
// block). Before rowio bounded the window by the page, a 10-byte frame
// declaring 512 MiB allocated 513 MiB.
func zstdWindow(n int) uint64 { return 9<<20 + (128<<10)/4*uint64(n) }

// allocated is the bytes allocated so far by the program.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// committedTableFiles commits rows to each of fuzzTables through the
// package's writers and returns the bytes of each one's committed file,
// and the footer sum the manifest records of it, in fuzzTables' order.
func committedTableFiles(f *testing.F) ([][]byte, []rowio.FooterSum) {
	f.Helper()
	d, err := Open(context.Background(), f.TempDir(), OpenOptions{Create: true})
	if err != nil {
		f.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		f.Fatal(err)
	}
	h1, h2 := schema.Hash{0x42, 1}, schema.Hash{0x42, 2}
	stage := func(table, key string, write func() (FileInfo, error)) {
		fi, err := write()
		if err != nil {
			f.Fatal(err)
		}
		tx.SetPartition(table, key, []FileInfo{fi})
	}
	stage(TableLeases, "", func() (FileInfo, error) {
		return WriteStaged(tx, TableLeases, "", []schema.Lease{
			{InfoHash: h1, LeaseID: "L1", LeaseUntil: 1700000000000, Attempt: 1, Reason: "new", PlannedAt: 1699999999000},
			{InfoHash: h2, LeaseID: "L1", LeaseUntil: 1700000000000, Attempt: 3, Reason: "retry", PlannedAt: 1699999999000}})
	})
	stage(TablePeers, "", func() (FileInfo, error) {
		return WriteStaged(tx, TablePeers, "", []schema.PeerPenalty{
			{Addr: "127.0.0.1:6881", Class: "rejected", Until: 1700000000000, Failures: 2, LastAt: 1699999999000},
			{Addr: "[::1]:6882", Class: "connect_failed", Until: 1700000001000, Failures: 1}})
	})
	stage(TableTorrents, "42", func() (FileInfo, error) {
		return WriteStaged(tx, TableTorrents, "42", []schema.Torrent{
			{InfoHash: h1, HashType: 1, FetchedAt: 1700000000000, ServedBy: "127.0.0.1:6881", MetadataSize: 24,
				Meta: schema.Meta{Name: new("n"), NameRaw: []byte("n"), NameUTF8Valid: true, TotalSize: new(int64(5)),
					FileCount: new(int32(2)), Files: []schema.File{{Path: "a/b", PathRaw: []byte("a/b"), Length: 2},
						{Path: "c", PathRaw: []byte("c"), Length: 3}}, InfoBytes: []byte("d4:name1:n6:lengthi5ee")}},
			{InfoHash: h2, HashType: 2}})
	})
	tx.AddApplied(Applied{ID: "a1b2c3", Name: "observations-1.parquet", Rows: 5, At: time.UnixMilli(1700000000000)})
	tx.AddApplied(Applied{ID: "d4e5f6", Name: "-", Rows: 0, At: time.UnixMilli(1700000001000)})
	m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	var sums []rowio.FooterSum
	for _, name := range fuzzTables {
		t := m.Table(name)
		key := ""
		if name == TableTorrents {
			key = "42"
		}
		fi := t.Partitions[key][0]
		b, err := os.ReadFile(d.FilePath(t, key, fi))
		if err != nil {
			f.Fatal(err)
		}
		if !fi.Footer().Recorded() {
			f.Fatalf("%s: the manifest records no footer sum", name)
		}
		out, sums = append(out, b), append(sums, fi.Footer())
	}
	return out, sums
}
