package dedup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// captureStream is obs as the Arrow IPC stream capture writes, in batches
// of per rows.
func captureStream(t *testing.T, obs []schema.Observation, per int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := rowio.NewArrowWriter[schema.Observation]("test", &buf)
	for lo := 0; lo < len(obs); lo += per {
		if err := w.Write(obs[lo:min(lo+per, len(obs))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// trickle is a pipe that sends b in pieces with pauses between them, so
// that the reading side often waits for bytes not spooled yet.
func trickle(b []byte, piece int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for len(b) > 0 {
			n := min(piece, len(b))
			if _, err := pw.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
			time.Sleep(time.Millisecond)
		}
		pw.Close()
	}()
	return pr
}

// Stdin arriving slowly, read while it is spooled, gives the state the
// same rows in a file give; a hash list too. The inbox is empty after.
func TestStdinReadWhileSpooled(t *testing.T) {
	obs := genObs(41, 3000, 700)
	var list strings.Builder
	for _, o := range obs[:500] {
		list.WriteString(schema.Hex(o.InfoHash) + "\n")
	}
	for _, tt := range []struct {
		name  string
		stdin []byte
		piece int
	}{
		{"arrow", captureStream(t, obs, 256), 4093},
		{"hash list", []byte(list.String()), 301},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			viaPipe, viaFile := filepath.Join(dir, "pipe"), filepath.Join(dir, "file")
			if _, err := run(t, viaPipe, func(o *Options) { o.Stdin = trickle(tt.stdin, tt.piece) }, "-"); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "input")
			if err := os.WriteFile(file, tt.stdin, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := run(t, viaFile, nil, file); err != nil {
				t.Fatal(err)
			}
			compare(t, readState(t, viaPipe), readState(t, viaFile))
			if ents, _ := os.ReadDir(filepath.Join(viaPipe, "inbox")); len(ents) != 0 {
				t.Fatalf("inbox not emptied: %v", ents)
			}
			// The same bytes again are recognised as applied.
			st, err := run(t, viaPipe, func(o *Options) { o.Stdin = bytes.NewReader(tt.stdin) }, "-")
			if err != nil || st.InputsSkipped != 1 || st.Commits != 0 {
				t.Fatalf("re-sent stdin: %+v, %v", st, err)
			}
		})
	}
}

// A stream that goes bad after a good batch fails as bad input, commits
// nothing, and is set aside whole (what followed the bad part included),
// however slowly it arrives.
func TestStdinBadMidStream(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	good := captureStream(t, genObs(42, 600, 200), 100)
	// A message whose metadata length runs past the end, then more bytes.
	bad := append(append([]byte(nil), good[:len(good)-8]...), 0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f)
	bad = append(bad, bytes.Repeat([]byte{7}, 100_000)...)
	_, err := run(t, data, func(o *Options) { o.Stdin = trickle(bad, 997) }, "-")
	if exitcode.Of(err) != exitcode.Usage || !namesSetAside(err, data) {
		t.Fatalf("err = %v, want bad input set aside", err)
	}
	ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
	if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), badSuffix) {
		t.Fatalf("inbox holds %v, want the input set aside", ents)
	}
	kept, _ := os.ReadFile(filepath.Join(data, "inbox", ents[0].Name()))
	if !bytes.Equal(kept, bad) {
		t.Fatalf("set aside %d bytes of %d", len(kept), len(bad))
	}
	d, _ := dataset.Open(context.Background(), data, dataset.OpenOptions{})
	if m, _ := d.Current(); m.Snapshot != 0 {
		t.Fatalf("bad input committed snapshot %d", m.Snapshot)
	}
}

// Stdin named twice is a usage error, before anything is read.
func TestStdinNamedTwice(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	stdin := strings.NewReader("0123456789abcdef0123456789abcdef01234567\n")
	_, err := run(t, data, func(o *Options) { o.Stdin = stdin }, "-", "-")
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "more than once") {
		t.Fatalf("err = %v", err)
	}
	if stdin.Len() == 0 {
		t.Fatal("stdin was read")
	}
}

// An interrupt while stdin is silent ends the run at once, with the
// context's error and no commit, whether the run is reading a stream
// (Arrow) or still waiting for the first bytes.
func TestStdinInterruptedWhileWaiting(t *testing.T) {
	stream := captureStream(t, genObs(43, 500, 100), 100)
	for _, tt := range []struct {
		name string
		sent []byte
	}{
		{"mid-stream", stream[:len(stream)/2]},
		{"nothing sent", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			data := filepath.Join(spoolTempDir(t, pw), "ds")
			go pw.Write(tt.sent)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				o := DefaultOptions()
				o.Data, o.Inputs, o.Now, o.Stdin = data, []string{"-"}, t0, pr
				_, err := Run(ctx, o)
				done <- err
			}()
			time.Sleep(200 * time.Millisecond)
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			case <-time.After(time.Minute): // a bound on a hang, not a speed
				t.Fatal("the run did not end on interrupt while stdin was silent")
			}
			d, _ := dataset.Open(context.Background(), data, dataset.OpenOptions{})
			if m, _ := d.Current(); m.Snapshot != 0 {
				t.Fatalf("an interrupted run committed snapshot %d", m.Snapshot)
			}
		})
	}
}

// spoolTempDir is t.TempDir for a run whose stdin is pw and which the
// test interrupts: the run returns while its spool still waits on stdin.
// Closed normally at the end of the test, the pipe let that spool commit
// its file into the inbox while the TempDir cleanup was removing it
// ("directory not empty"). The pipe is closed with an error instead,
// which makes the spool abort, and the removal is retried until the
// spool has let go.
func spoolTempDir(t *testing.T, pw *io.PipeWriter) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dedup-stdin-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pw.CloseWithError(errors.New("test over"))
		for range 500 {
			if err = os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("removing %s: %v", dir, err)
	})
	return dir
}
