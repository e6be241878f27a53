package merge

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestArrowSchemaOOM replays an Arrow IPC stream found by fuzzing whose
// schema message declares billions of fields: arrow/go v17's ipc.NewReader
// (schemaFromFB) allocates them before checking anything. formats/rowio
// now validates messages before arrow sees them; this keeps it so.
func TestArrowSchemaOOM(t *testing.T) {
	b, err := os.ReadFile("testdata/arrow-schema-oom.fuzz")
	if err != nil {
		t.Fatal(err)
	}
	b = b[bytes.IndexByte(b, '"')+1 : bytes.LastIndexByte(b, '"')]
	unq, err := strconv.Unquote(`"` + string(b) + `"`)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "in")
	os.WriteFile(path, []byte(unq), 0o644)
	if _, _, err := readResults(input{name: "IN", path: path}, nil); err == nil {
		t.Fatal("accepted")
	}
}

// FuzzReadResults feeds arbitrary bytes to merge's results reader (as a
// file or a spooled stdin stream would arrive), Parquet or Arrow IPC: it
// must never panic, a rejected input is bad input (exit 2) naming the
// input, and a cut Arrow stream gives the rows of its whole batches.
// Arrow input was once left out because arrow/go v17 allocates whatever a
// schema message claims (TestArrowSchemaOOM); rowio bounds that now
// (framedReader's message checks, limitAllocator).
//
// A worker that dies with "exit status 2" and nothing else printed has
// panicked or hit a fatal error: Go discards a fuzz worker's stderr, and
// kills a worker whose input runs over 10 s (panic "deadlocked!"), which a
// huge allocation can take under memory pressure though the same input is
// fast alone. TestReadResultsHostileFooter has the case that did this.
//
// A Parquet file whose pages' CRCs do not match is read again with
// matching ones (rowiotest.FixPageCRCs), as a crafted file would have
// them: else the CRC check would stop every change to a page before its
// decoders.
func FuzzReadResults(f *testing.F) {
	rowio.FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	info, h := torrentInfo("fuzz")
	rs := []schema.Result{
		{InfoHash: h, AttemptedAt: 1, Outcome: schema.OutcomeOK, ResultMeta: schema.ResultMeta{InfoBytes: info}},
		{InfoHash: hashAt(1, 1), AttemptedAt: 2, Outcome: schema.OutcomeNoPeers,
			PeerFailures: []schema.PeerFailure{{Addr: "127.0.0.1:1", Class: "rejected", At: 2}}},
	}
	pq := filepath.Join(f.TempDir(), "r.parquet")
	w, _ := rowio.Create[schema.Result](pq, nil)
	w.Write(rs)
	w.Close()
	b, _ := os.ReadFile(pq)
	f.Add(b)
	f.Add([]byte("PAR1"))
	f.Add([]byte("PAR1garbagePAR1"))
	// An Arrow stream of two batches, whole and cut in its second batch.
	var stream bytes.Buffer
	aw := rowio.NewArrowWriter[schema.Result]("seed", &stream)
	aw.Write(rs[:1])
	whole := stream.Len()
	aw.Write(rs[1:])
	aw.Close()
	f.Add(stream.Bytes())
	f.Add(stream.Bytes()[:whole+(stream.Len()-whole)/2])
	f.Add(stream.Bytes()[:whole/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		rowiotest.AsIsAndFixed(t, data, readFuzzResults)
	})
}

// readFuzzResults is FuzzReadResults's check of one input.
func readFuzzResults(t *testing.T, data []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, cut, err := readResults(input{name: "IN", path: path}, nil)
	if err != nil {
		// rowio's errors name a file by its path (for a file named on
		// the command line, the same as its input name).
		named := strings.Contains(err.Error(), "merge: IN") || strings.Contains(err.Error(), "merge: "+path)
		if exitcode.Of(err) != exitcode.Usage || !named || strings.Contains(err.Error(), "\n") {
			t.Fatalf("error %q (exit %d) is not one line of bad input naming the input", err, exitcode.Of(err))
		}
		return
	}
	if cut != nil && (cut.Rows != int64(len(got)) || cut.Rows == 0 || cut.Size != int64(len(data)) || cut.Whole >= cut.Size) {
		t.Fatalf("%d rows read from a %d-byte input cut as %+v", len(got), len(data), *cut)
	}
	for i := range got {
		if err := checkResult(&got[i].Result); err != nil {
			t.Fatalf("accepted row %d fails the check: %v", i, err)
		}
	}
}

// TestReadResultsCompressible reads a large results file whose constant
// columns zstd shrinks over 1000-fold (100,000 v1 no_peers results, the
// size of one benchmark batch): a legitimate file, not a decompression
// bomb.
func TestReadResultsCompressible(t *testing.T) {
	const n = 100_000
	rs := make([]schema.Result, n)
	r := rand.New(rand.NewPCG(5, 5))
	for i := range rs {
		var h schema.Hash
		for j := range h {
			h[j] = byte(r.Uint32())
		}
		rs[i] = schema.Result{InfoHash: h, HashType: schema.HashV1, Attempt: 1,
			AttemptedAt: 1_700_000_000_000, Outcome: schema.OutcomeNoPeers}
	}
	got, _, err := readResults(input{name: "IN", path: writeResults(t, rs)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("read %d results, want %d", len(got), n)
	}
}

// TestReadResultsOfAnotherKind: a file that is neither Parquet nor an
// Arrow stream (a hash list given to merge by mistake) is named as such,
// not as an Arrow stream declaring absurd metadata.
func TestReadResultsOfAnotherKind(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hashes.txt")
	os.WriteFile(p, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644)
	_, _, err := readResults(input{name: "hashes.txt", path: p}, nil)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "hashes.txt: neither Parquet nor an Arrow IPC stream") {
		t.Fatalf("got %v", err)
	}
}

// TestReadResultsPanic: a panic under readResults that is not the
// decoders' (here a spill without its dataset, which panics in merge's
// own code) is bad input carrying rowio's CorruptError, the stack logged
// at debug level by rowio.PanicError; under rowio.FailOnOwnPanics, as in
// the fuzz targets, it panics again instead, so that fuzzing reports it.
func TestReadResultsPanic(t *testing.T) {
	info, h := torrentInfo("panic")
	path := writeResults(t, []schema.Result{{InfoHash: h, AttemptedAt: 1, Outcome: schema.OutcomeOK,
		ResultMeta: schema.ResultMeta{InfoBytes: info}}})
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			if strict {
				rowio.FailOnOwnPanics(t)
			}
			var err error
			again := func() (p any) {
				defer func() { p = recover() }()
				_, _, err = readResults(input{name: "IN", path: path}, &metaSpill{})
				return nil
			}()
			if strict {
				if again == nil || !strings.Contains(fmt.Sprint(again), "a panic in this module's code") {
					t.Fatalf("err %v, panic %v: want the panic raised again", err, again)
				}
				return
			}
			if again != nil || exitcode.Of(err) != exitcode.Usage || !errors.Is(err, rowio.ErrCorrupt) ||
				!strings.HasPrefix(err.Error(), "merge: IN: corrupt fetch results: the decoder failed: runtime error") {
				t.Fatalf("err %v (exit %d), panic %v: want bad input, a rowio.CorruptError", err, exitcode.Of(err), again)
			}
		})
	}
}
