package fetch

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
)

// FuzzOpenJobs feeds arbitrary bytes to fetch's jobs input as a file and,
// unless they start as Parquet, on stdin: Parquet (info_hash fixed or
// binary), an Arrow IPC stream, or a text list. The outcome is jobs or
// one line of error naming the input, never a panic; every job handed
// over has dialable peers, a consistent info_hash_v2 and a UTF-8 lease_id
// (checkPeers, blobJobs); a stream reads the same jobs from a file and
// from stdin. A Parquet file whose pages' CRCs do not match is read again
// with matching ones (rowiotest.FixPageCRCs), as a crafted file would have
// them: else the CRC check would stop every change to a page before its
// decoders.
func FuzzOpenJobs(f *testing.F) {
	rowio.FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	v2 := bytes.Repeat([]byte{7}, 32)
	jobs := []schema.Job{
		{InfoHash: schema.Hash{1}, HashType: 1, Attempt: 2, Reason: "new", LeaseID: "L", LeaseUntil: 1700000000000,
			Peers: []string{"127.0.0.1:1"}, AvoidPeers: []string{"127.0.0.1:2"}},
		{InfoHash: schema.Hash(v2[:20]), InfoHashV2: v2, HashType: 2, Reason: "retry"},
	}
	seedFile := func(write func(p string) error) []byte {
		p := filepath.Join(f.TempDir(), "seed")
		if err := write(p); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	pq := seedFile(func(p string) error { return writeFileRows(p, jobs) })
	blob := seedFile(func(p string) error {
		return writeFileRows(p, []duckJob{{InfoHash: v2, HashType: 1, LeaseID: "a"}, {InfoHash: jobs[0].InfoHash[:]}})
	})
	var stream bytes.Buffer
	w := rowio.NewArrowWriter[schema.Job]("seed", &stream)
	w.Write(jobs[:1])
	w.Write(jobs[1:])
	w.Close()
	text := "# jobs\n" + schema.Hex(jobs[0].InfoHash) + "\n\n" + hex.EncodeToString(v2) + "\n" +
		"magnet:?xt=urn:btih:" + schema.Hex(jobs[0].InfoHash) + "&dn=x\n"
	// Hash columns of text (hex), in Parquet and in an Arrow stream.
	hexJobs := []hexJob{{schema.Hex(jobs[0].InfoHash), ""}, {hex.EncodeToString(v2[:20]), hex.EncodeToString(v2)}}
	hexPq := seedFile(func(p string) error { return writeFileRows(p, hexJobs) })
	var hexStream bytes.Buffer
	hw := rowio.NewArrowWriter[hexJob]("seed", &hexStream)
	hw.Write(hexJobs)
	hw.Close()
	for _, s := range [][]byte{pq, blob, stream.Bytes(), []byte(text), hexPq, hexStream.Bytes()} {
		f.Add(s)
		f.Add(s[:len(s)/2])
	}
	f.Add([]byte("PAR1"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		rowiotest.AsIsAndFixed(t, data, checkJobsInput)
	})
}

// checkJobsInput is FuzzOpenJobs's check of one input.
func checkJobsInput(t *testing.T, data []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jobs")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, fileErr := fuzzReadJobs(t, p, nil)
	if bytes.HasPrefix(data, []byte("PAR1")) {
		return // stdin takes no Parquet
	}
	fromStdin, stdinErr := fuzzReadJobs(t, "-", bytes.NewReader(data))
	if (fileErr == nil) != (stdinErr == nil) || !slices.EqualFunc(fromFile, fromStdin, sameJob) {
		t.Fatalf("from the file: %d jobs, %v; from stdin: %d jobs, %v", len(fromFile), fileErr, len(fromStdin), stdinErr)
	}
}

// fuzzReadJobs reads every job of path (stdin: in) a few at a time and
// checks them and the error that ends the input.
func fuzzReadJobs(t *testing.T, path string, in io.Reader) ([]jobRow, error) {
	name := path
	if path == "-" {
		name = "stdin"
	}
	r, err := openJobs(path, in, "")
	if err != nil {
		checkJobsError(t, name, err)
		return nil, err
	}
	defer r.Close()
	var out []jobRow
	buf := make([]jobRow, 3)
	for {
		n, err := r.Read(buf)
		for _, j := range buf[:n] {
			if perr := jobPeersError(j.Peers); perr != nil {
				t.Fatalf("a job with bad peers handed over: %v", perr)
			}
			if verr := jobV2Error(&j); verr != nil {
				t.Fatalf("a job with a bad info_hash_v2 handed over: %v", verr)
			}
			if !utf8.ValidString(j.LeaseID) {
				t.Fatalf("a job with lease_id %q handed over", j.LeaseID)
			}
		}
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			if left, ok := r.Unread(); ok && left != 0 {
				t.Fatalf("%d jobs read, %d left unread at the end", len(out), left)
			}
			return out, nil
		}
		if err != nil {
			checkJobsError(t, name, err)
			if again, err2 := r.Read(buf); again != 0 || err2 == nil {
				t.Fatalf("read %d jobs (%v) after the error %v", again, err2, err)
			}
			return out, err
		}
	}
}

// checkJobsError fails t unless err is one line naming the input.
func checkJobsError(t *testing.T, name string, err error) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, name) {
		t.Fatalf("error %q is not one line naming %s", msg, name)
	}
}

// sameJob reports whether two jobs are the same.
func sameJob(a, b jobRow) bool {
	return a.InfoHash == b.InfoHash && bytes.Equal(a.InfoHashV2, b.InfoHashV2) && a.HashType == b.HashType &&
		a.Attempt == b.Attempt && a.LeaseID == b.LeaseID && a.LeaseUntil == b.LeaseUntil &&
		slices.Equal(a.Peers, b.Peers) && slices.Equal(a.AvoidPeers, b.AvoidPeers)
}

// writeFileRows writes rows to a Parquet file at path.
func writeFileRows[T any](path string, rows []T) error {
	w, err := rowio.Create[T](path, nil)
	if err != nil {
		return err
	}
	if err := w.Write(rows); err != nil {
		return err
	}
	return w.Close()
}
