package rowio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/lz4"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
)

// ledgerRow is a ledger entry as formats/dataset writes it (its own type
// is unexported there, and dataset imports rowio).
type ledgerRow struct {
	ID   string `parquet:"id"`
	Name string `parquet:"name"`
	Rows int64  `parquet:"rows"`
	At   int64  `parquet:"applied_at,timestamp(millisecond)"`
}

// FuzzRowioParquet opens whole files as the row type the first byte picks
// (jobs, results with nested lists, observations, and the dataset's
// leases, peers, ledger and torrents) and reads every row: the outcome is
// rows or one line of error, never a panic or a hang. A file whose pages'
// CRCs do not match is read again with matching ones
// (rowiotest.FixPageCRCs), as a crafted file would have them: else the
// CRC check would stop every change to a page before its decoders.
func FuzzRowioParquet(f *testing.F) {
	FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	jobs := []schema.Job{{InfoHash: schema.Hash{1}, HashType: 1, Attempt: 2, Reason: "new", LeaseID: "L",
		LeaseUntil: 1700000000000, Peers: []string{"127.0.0.1:1"}, AvoidPeers: []string{"127.0.0.1:2"}}}
	leases := []schema.Lease{{InfoHash: schema.Hash{1}, LeaseID: "L", LeaseUntil: 1700000000000, Attempt: 1,
		Reason: "new", PlannedAt: 1699999999000}, {InfoHash: schema.Hash{2}, LeaseID: "M", Reason: "retry"}}
	peers := []schema.PeerPenalty{{Addr: "127.0.0.1:1", Class: "rejected", Until: 1700000000000, Failures: 2,
		LastAt: 1699999999000}, {Addr: "[::1]:2", Class: "connect_failed"}}
	ledger := []ledgerRow{{ID: "a1b2", Name: "results-1.parquet", Rows: 5, At: 1700000000000}, {ID: "c3", Name: "-"}}
	torrents := []schema.Torrent{{InfoHash: schema.Hash{1}, HashType: 1, FetchedAt: 1700000000000, ServedBy: "127.0.0.1:2",
		MetadataSize: 11, Meta: schema.Meta{Name: new("n"), NameRaw: []byte("n"), NameUTF8Valid: true, TotalSize: new(int64(5)),
			FileCount: new(int32(1)), Files: []schema.File{{Path: "a/b", PathRaw: []byte("a/b"), Length: 5}},
			InfoBytes: []byte("d4:name1:ne")}}, {InfoHash: schema.Hash{2}, HashType: 2}}
	seeds := [][]byte{
		append([]byte{0}, writeFile(f, jobs)...),
		append([]byte{1}, writeFile(f, sampleResults())...),
		append([]byte{2}, writeFile(f, sampleObs(50))...),
		append([]byte{3}, writeFile(f, leases)...),
		append([]byte{4}, writeFile(f, peers)...),
		append([]byte{5}, writeFile(f, ledger)...),
		append([]byte{6}, writeFile(f, torrents)...),
	}
	if bad, _ := brokenDictWidth(f, 8); bad != nil { // indexes past the dictionary
		seeds = append(seeds, append([]byte{2}, bad...))
	}
	if duck, err := os.ReadFile("testdata/duckdb/nulls.parquet"); err == nil { // padded level runs
		seeds = append(seeds, append([]byte{2}, duck...))
	}
	for _, v := range []int{1, 2} { // LZ4_RAW, read decompressed by rowio (unpackLZ4)
		seeds = append(seeds, append([]byte{2}, writeFile(f, sampleObs(300), parquet.Compression(&lz4.Codec{}), parquet.DataPageVersion(v))...))
	}
	for _, s := range seeds {
		f.Add(s)
		f.Add(s[:len(s)/2])
		c := bytes.Clone(s)
		c[len(c)-30] ^= 0x10
		f.Add(c)
	}
	p := filepath.Join(f.TempDir(), "in.parquet")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		readFuzzFile(t, p, data[0], data[1:])
		if fixed, n := rowiotest.FixPageCRCs(data[1:]); n > 0 {
			t.Logf("read again with the CRCs of %d pages fixed", n)
			readFuzzFile(t, p, data[0], fixed)
		}
	})
}

// readFuzzFile is FuzzRowioParquet's check of one file, written to p and
// read as the row type kind picks.
func readFuzzFile(t *testing.T, p string, kind byte, file []byte) {
	t.Helper()
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind % 7 {
	case 0:
		err = readAllFile[schema.Job](p)
	case 1:
		err = readAllFile[schema.Result](p)
	case 2:
		err = readAllFile[schema.Observation](p)
	case 3:
		err = readAllFile[schema.Lease](p)
	case 4:
		err = readAllFile[schema.PeerPenalty](p)
	case 5:
		err = readAllFile[ledgerRow](p)
	default:
		err = readAllFile[schema.Torrent](p)
	}
	if err != nil && (strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), p+": ")) {
		t.Fatalf("error not one line naming the file: %q", err)
	}
}

func readAllFile[T any](p string) error {
	r, err := Open[T](p, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	buf := make([]T, 64)
	for {
		if _, err := r.Read(buf); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestPatchedCRCsReachDecoders: whichever byte of a file parquet-go wrote
// (zstd pages, dictionaries, nested lists) is flipped, FuzzRowioParquet's
// second read, of the file FixPageCRCs patched, meets no page CRC
// mismatch, where the first read of some flips stops at one.
func TestPatchedCRCsReachDecoders(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.parquet")
	for _, tc := range []struct {
		name string
		file []byte
		read func(string) error
	}{
		{"results", writeFile(t, sampleResults()), readAllFile[schema.Result]},
		{"observations", writeFile(t, sampleObs(200)), readAllFile[schema.Observation]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func(b []byte) bool {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				err := tc.read(p)
				return err != nil && strings.Contains(err.Error(), "checksum mismatch")
			}
			flips, stopped, patched := 0, 0, 0
			for at := 4; at < len(tc.file)-8; at += 41 {
				flips++
				b := bytes.Clone(tc.file)
				b[at] ^= 0x10
				if read(b) {
					stopped++
				}
				fixed, n := rowiotest.FixPageCRCs(b)
				if n == 0 {
					continue
				}
				patched++
				if read(fixed) {
					t.Fatalf("byte %d flipped, %d pages patched: still a CRC mismatch", at, n)
				}
			}
			if stopped == 0 || patched < stopped {
				t.Fatalf("%d flips stopped at a page CRC, %d patched", stopped, patched)
			}
			t.Logf("%d of %d flips stopped at a page CRC, %d patched", stopped, flips, patched)
		})
	}
}
