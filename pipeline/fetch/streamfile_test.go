package fetch

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestResultsReachFileWithinASecond: with -o - redirected to a file
// ("fetch ... -o - > results.arrows"), a result reaches the file as a
// whole record batch within about a second of its attempt (the writer's
// tick), while the run goes on: a kill -9 then loses at most the last
// second's results.
func TestResultsReachFileWithinASecond(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.arrows")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := createResults(Options{Output: "-", Stdout: f})
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan schema.Result)
	done := make(chan error, 1)
	go func() { done <- writeResults(results, out, func(_ []schema.Result, err error) error { return err }) }()
	for i := range 3 {
		sent := time.Now()
		results <- schema.Result{InfoHash: schema.Hash{byte(i + 1)}, Outcome: schema.OutcomeNoPeers, AttemptedAt: 1}
		// The writer's tick (a second) flushes it while no more results
		// come; how soon is the tick's business, not this test's (a
		// 1.5 s bound here was a speed claim): a writer that waits for a
		// full batch never gets it there, and backstop ends the wait.
		for n := 0; n < i+1; n = len(wholeRows(t, path)) {
			if time.Since(sent) > backstop {
				t.Fatalf("result %d not in %s %v after it was sent (%d rows there)", i+1, path, time.Since(sent), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	close(results)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(wholeRows(t, path)); n != 3 {
		t.Fatalf("%d rows in the closed stream, want 3", n)
	}
}

// wholeRows reads the rows of the whole batches of the Arrow stream in
// the file at path, which may still be written.
func wholeRows(t *testing.T, path string) []schema.Result {
	t.Helper()
	b, _ := os.ReadFile(path)
	r, err := rowio.OpenArrow[schema.Result](path, bytes.NewReader(b))
	if err != nil {
		return nil
	}
	defer r.Close()
	var out []schema.Result
	buf := make([]schema.Result, 16)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if _, cut := rowio.AsCut(err); cut || errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
