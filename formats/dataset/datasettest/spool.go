package datasettest

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// LiveSpool starts a spool into inbox named with suffix, as a run reading
// its stdin does, that is still receiving when it returns, and returns
// the path of the file being written; the spool ends when the test does.
func LiveSpool(t testing.TB, inbox, suffix string) string {
	t.Helper()
	pr, pw := io.Pipe()
	s, err := dataset.StartSpool(inbox, suffix, pr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pw.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.Wait(ctx)
		s.Close()
	})
	matches, _ := filepath.Glob(filepath.Join(inbox, ".tmp-*"+suffix+"-*"))
	if len(matches) != 1 {
		t.Fatalf("spooling files %q, want one", matches)
	}
	return matches[0]
}
