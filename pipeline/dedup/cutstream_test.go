package dedup

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/inputdir/inputdirtest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/status"
)

// cutCapture is obs as capture streams them, in batches of 100, and
// where each batch ends in the stream.
func cutCapture(t *testing.T, obs []schema.Observation) (stream []byte, ends []int) {
	t.Helper()
	return inputdirtest.Stream(t, obs, 100)
}

// TestDedupCutStream: capture killed while writing a batch leaves dedup
// a stream cut mid-message; killed between two batches, a stream that
// ends without its end-of-stream marker. Its whole batches are not
// applied (a stream sent again whole would count them twice) and not
// thrown in with the cut message as bad input either: they are kept as
// a partial input, which status lists, and the cut message, if any,
// beside it, so that every byte of the stream is kept; the run exits 2
// with one line saying how many rows came whole, where they are and how
// to apply them. Applied as that line says, the partial input gives the
// state those rows give, leaves the inbox and status, and applied again
// is a no-op.
func TestDedupCutStream(t *testing.T) {
	obs := genObs(77, 600, 150)
	stream, ends := cutCapture(t, obs)
	const cutMsg, noEnd = "the stream was cut mid-message after %d complete rows, none applied",
		"the stream ended without its end-of-stream marker after %d complete rows (its writer was stopped before closing it), none applied"
	for _, tt := range []struct {
		name string
		cut  int
		fast bool // the column reader, else the row reader
		rows int
		want string // what the error says, of rows
	}{
		{"inside a message", ends[2] + (ends[3]-ends[2])/2, true, 300, cutMsg},
		{"inside a message, row reader", ends[2] + (ends[3]-ends[2])/2, false, 300, cutMsg},
		{"after a message's continuation marker", ends[2] + 4, true, 300, cutMsg},
		{"before a message's metadata", ends[2] + 8, true, 300, cutMsg},
		{"between messages, no end marker", ends[2], true, 300, noEnd},
		{"between messages, no end marker, row reader", ends[2], false, 300, noEnd},
		{"after the last batch, no end marker", ends[5], true, 600, noEnd},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() { fastPath = true }()
			fastPath = tt.fast
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			cut := stream[:tt.cut]
			_, err := run(t, data, func(o *Options) { o.Stdin = trickle(cut, 997) }, "-")
			inbox := filepath.Join(data, "inbox")
			if exitcode.Of(err) != exitcode.Usage || datasettest.Snapshot(t, data) != 0 {
				t.Fatalf("exit %d (%v), snapshot %d: want 2, nothing committed", exitcode.Of(err), err, datasettest.Snapshot(t, data))
			}
			partials, _ := filepath.Glob(filepath.Join(inbox, dataset.PartialPrefix+"*.arrow"))
			tails, _ := filepath.Glob(filepath.Join(inbox, "*"+dataset.CutSuffix))
			wantTails := 1
			if tt.want == noEnd {
				wantTails = 0 // nothing was cut: all of it is in the partial input
			}
			if ents, _ := os.ReadDir(inbox); len(partials) != 1 || len(tails) != wantTails || len(ents) != 1+wantTails {
				t.Fatalf("inbox holds %v, want a partial input and %d cut message", ents, wantTails)
			}
			msg := err.Error()
			apply := fmt.Sprintf(`"infohash dedup --data %s %s"`, data, partials[0])
			says := []string{"dedup: stdin: " + fmt.Sprintf(tt.want, tt.rows), "kept as " + partials[0] + " ", apply}
			for _, tail := range tails {
				says = append(says, "as "+tail)
			}
			for _, w := range says {
				if !strings.Contains(msg, w) {
					t.Errorf("err = %q, want it to say %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "set aside as") {
				t.Errorf("err = %q, want one line, nothing set aside as bad input", msg)
			}
			// Every byte is kept: the partial input less its end marker,
			// then the cut message.
			part, _ := os.ReadFile(partials[0])
			var tail []byte
			for _, p := range tails {
				tail, _ = os.ReadFile(p)
			}
			eos := []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
			if !bytes.HasSuffix(part, eos) || !bytes.Equal(append(part[:len(part)-8:len(part)-8], tail...), cut) {
				t.Fatalf("kept %d + %d bytes, not the %d of the stream", len(part), len(tail), len(cut))
			}
			r, err := status.Run(context.Background(), data, t0, status.Options{})
			if err != nil || len(r.Partial) != 1 || r.Partial[0] != partials[0] || !slices.Equal(r.Rejected, tails) {
				t.Fatalf("status lists partial %v, rejected %v (%v)", r.Partial, r.Rejected, err)
			}
			// Applied as the error says.
			if _, err := run(t, data, nil, partials[0]); err != nil {
				t.Fatalf("applying the partial input: %v", err)
			}
			compare(t, readState(t, data), truth(obs[:tt.rows]))
			if _, err := os.Stat(partials[0]); !os.IsNotExist(err) {
				t.Fatalf("the applied partial input is still there (%v)", err)
			}
			if r, _ := status.Run(context.Background(), data, t0, status.Options{}); len(r.Partial) != 0 {
				t.Fatalf("status still lists %v", r.Partial)
			}
			if err := os.WriteFile(partials[0], part, 0o644); err != nil {
				t.Fatal(err)
			}
			if st, err := run(t, data, nil, partials[0]); err != nil || st.Commits != 0 || st.InputsSkipped != 1 {
				t.Fatalf("the partial input again: %+v, %v; want a no-op", st, err)
			}
		})
	}
}

// TestDedupCutLeftover: a cut stream left whole in the inbox (spooled by
// a run locked out or killed after the spool) is kept apart the same way
// by the next run, which applies nothing of it.
func TestDedupCutLeftover(t *testing.T) {
	obs := genObs(78, 400, 100)
	stream, ends := cutCapture(t, obs)
	data := filepath.Join(t.TempDir(), "ds")
	if _, err := run(t, data, nil, writeObs(t, t.TempDir(), obs[:10])); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(data, "inbox")
	if err := os.WriteFile(filepath.Join(inbox, "part-0a1b.spool"), stream[:ends[1]+50], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, data, nil)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "leftover "+filepath.Join(inbox, "part-0a1b.spool")+": the stream was cut mid-message after 200 complete rows") {
		t.Fatalf("err = %v", err)
	}
	for _, name := range []string{"partial-part-0a1b.arrow", "part-0a1b.spool" + dataset.CutSuffix} {
		if _, err := os.Stat(filepath.Join(inbox, name)); err != nil {
			t.Fatal(err)
		}
	}
	// The next bare run applies nothing, and says what is there and how
	// to apply it, not that the inbox holds nothing.
	partial := filepath.Join(inbox, "partial-part-0a1b.arrow")
	_, err = run(t, data, nil)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "only partial input") ||
		!strings.Contains(err.Error(), "infohash dedup --data "+data+" "+partial) || strings.Contains(err.Error(), "holds nothing") {
		t.Fatalf("the next bare run: %v, want no input naming %s and how to apply it", err, partial)
	}
}

// TestDedupCorruptStreamStaysBad: a stream whose messages are garbage,
// not cut, is bad input as before, set aside whole; so is one cut before
// its first whole batch, which holds nothing to keep apart.
func TestDedupCorruptStreamStaysBad(t *testing.T) {
	stream, ends := cutCapture(t, genObs(79, 300, 100))
	junk := append(bytes.Clone(stream[:ends[1]]), 0xff, 0xff, 0xff, 0xff, 32, 0, 0, 0)
	junk = append(junk, bytes.Repeat([]byte{0x5a}, 500)...)
	for _, tt := range []struct {
		name, want string
		in         []byte
	}{
		{"malformed metadata after whole batches", "corrupt Arrow IPC stream: malformed message metadata", junk},
		{"cut inside the first batch", "cut mid-message after 0 complete rows", stream[:ends[0]-10]},
		{"cut inside the schema", "ends 30 bytes into its schema", stream[:30]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			_, err := run(t, data, func(o *Options) { o.Stdin = bytes.NewReader(tt.in) }, "-")
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tt.want) || !namesSetAside(err, data) {
				t.Fatalf("err = %v, want bad input saying %q, set aside", err, tt.want)
			}
			ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
			if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".spool"+badSuffix) {
				t.Fatalf("inbox holds %v, want the input set aside whole", ents)
			}
			if kept, _ := os.ReadFile(filepath.Join(data, "inbox", ents[0].Name())); !bytes.Equal(kept, tt.in) {
				t.Fatalf("set aside %d bytes of %d", len(kept), len(tt.in))
			}
		})
	}
}

// TestDedupCutFileNamed: a cut stream named as an INPUT (not a spool of
// dedup's own: a file capture -o - > FILE left when killed mid-batch) is
// the input itself: its whole batches are applied and committed, the run
// is partial (exit 3) with one line saying how many rows came whole and
// how many bytes of the cut message were left out, and the file is left
// as it is. Applied again it is a no-op (the ledger holds its checksum).
// Cut inside its first batch (its schema whole: a capture killed while
// writing its first batch) it is such a file with no whole batch: nothing
// applied but its ledger entry, exit 3 saying it was cut before its first
// whole batch, and a no-op (exit 0) again.
func TestDedupCutFileNamed(t *testing.T) {
	obs := genObs(80, 300, 100)
	stream, ends := cutCapture(t, obs)
	for _, tt := range []struct {
		name string
		fast bool
		cut  int
		rows int
	}{
		{"after two batches", true, ends[1] + 20, 200},
		{"after two batches, row reader", false, ends[1] + 20, 200},
		{"inside the first batch", true, ends[0] - 10, 0},
		{"inside the first batch, row reader", false, ends[0] - 10, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() { fastPath = true }()
			fastPath = tt.fast
			path := filepath.Join(t.TempDir(), "obs.arrows")
			if err := os.WriteFile(path, stream[:tt.cut], 0o644); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(t.TempDir(), "ds")
			st, err := run(t, data, nil, path)
			want := fmt.Sprintf("dedup: %s: the Arrow IPC stream was cut mid-message after %d complete rows, which were applied "+
				"(its writer was killed while writing a batch: the %d bytes of the cut one are left out)", path, tt.rows, tt.cut-ends[1])
			if tt.rows == 0 {
				want = fmt.Sprintf("dedup: %s: the Arrow IPC stream was cut before its first whole batch, nothing applied "+
					"(its writer was killed while writing it: the %d bytes of the cut batch are left out) (%v: applying the same file again changes nothing)",
					path, tt.cut-schemaEnd(t, stream), ErrLeftOut)
			}
			if exitcode.Of(err) != exitcode.Partial || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v (exit %d), want exit 3 saying %q", err, exitcode.Of(err), want)
			}
			if st.Commits != 1 || st.Observations != int64(tt.rows) {
				t.Fatalf("stats %+v, want one commit of %d observations", st, tt.rows)
			}
			compare(t, readState(t, data), truth(obs[:tt.rows]))
			if b, _ := os.ReadFile(path); len(b) != tt.cut {
				t.Fatalf("the input was touched: %d bytes", len(b))
			}
			if st, err := run(t, data, nil, path); err != nil || st.Commits != 0 || st.InputsSkipped != 1 {
				t.Fatalf("the same file again: %+v, %v; want a no-op", st, err)
			}
			compare(t, readState(t, data), truth(obs[:tt.rows]))
		})
	}
}

// TestDedupNoEndFileNamed: a file named as an INPUT is read as it is: an
// Arrow stream in it that ends between two messages without its
// end-of-stream marker (one a writer legitimately ended by closing it,
// or a partial input's bytes copied without its marker) is applied, as
// before; only a stream dedup spooled must end with the marker.
func TestDedupNoEndFileNamed(t *testing.T) {
	obs := genObs(81, 300, 100)
	stream, ends := cutCapture(t, obs)
	path := filepath.Join(t.TempDir(), "obs.arrow")
	if err := os.WriteFile(path, stream[:ends[1]], 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "ds")
	if _, err := run(t, data, nil, path); err != nil {
		t.Fatal(err)
	}
	compare(t, readState(t, data), truth(obs[:200]))
}
