package status

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
)

// TestRejectedInputs: status says what each *.bad file under DIR/inbox
// is, from the name its maker gave it: only a spool of stdin or a pipe
// is called one; a crawl-pass work file is not, nor is a partial input
// that turned out bad listed as one to apply.
func TestRejectedInputs(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		file string // under DIR/inbox
		want string // what the line says the file is
	}{
		{"dedup stdin spool", dataset.NewName(".spool") + ".bad", "stdin or a pipe that dedup spooled and refused as bad input"},
		{"merge stdin spool", "merge/" + dataset.NewName(".results") + ".bad", "stdin or a pipe that merge spooled and refused as bad input"},
		{"crawl-pass observations", "crawl-pass-20260601T0000Z-observations.parquet.bad", "a crawl-pass work file that dedup refused as bad input"},
		{"crawl-pass results", "merge/crawl-pass-20260601T0000Z-results.parquet.bad", "a crawl-pass work file that merge refused as bad input"},
		{"spool cut short", ".tmp-" + dataset.NewName(".spool") + "-123.bad", "a killed run's spool of stdin or a pipe, a Parquet file cut short"},
		{"partial applied by hand", dataset.PartialPrefix + "0011.arrow.bad", "a partial input that dedup refused as bad input"},
		{"cut message", dataset.NewName(".spool") + dataset.CutSuffix, "the cut end of a stream cut mid-message or of a list cut mid-line, whose whole batches or lines dedup kept as a partial input; nothing in it can be applied"},
		{"something else", "notes.bad", "bad input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(d.Dir, "inbox", filepath.FromSlash(tt.file))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), d.Dir, now, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Rejected) != 1 || r.Rejected[0] != p || len(r.Partial) != 0 {
				t.Fatalf("rejected %v, partial %v: want %s rejected alone", r.Rejected, r.Partial, p)
			}
			var out bytes.Buffer
			r.Print(&out)
			want := "rejected input (" + tt.want + "; set aside, not applied: look, then delete or fix and apply it): " + p + "\n"
			if !strings.Contains(out.String(), want) {
				t.Fatalf("text lacks\n%s\n%s", want, out.String())
			}
		})
	}
}

// TestSpoolsInInbox: status lists a whole spool of stdin or a pipe that
// no run has applied yet as pending, and one still under its temporary
// name (being written, or cut short by a killed run) as spooling, each
// with the stage whose inbox holds it. The files are made the way dedup
// and merge make them.
func TestSpoolsInInbox(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name, sub, ext string // inbox sub-folder, spool extension
		whole          bool   // committed under its final name
		want           string // the text line, up to the path
	}{
		{"dedup spool applied later", "", ".spool", true, "pending input (stdin or a pipe that dedup spooled, not applied yet: the next dedup applies it): "},
		{"merge spool applied later", "merge", ".results", true, "pending input (stdin or a pipe that merge spooled, not applied yet: the next merge applies it): "},
		{"dedup spool being written", "", ".spool", false, "spooling (stdin or a pipe that dedup is reading now, or a killed run cut short: the next dedup sets it aside): "},
		{"merge spool being written", "merge", ".results", false, "spooling (stdin or a pipe that merge is reading now, or a killed run cut short: the next merge sets it aside): "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			inbox := filepath.Join(d.Dir, "inbox", tt.sub)
			var p string
			if tt.whole {
				if p, err = dataset.Spool(inbox, tt.ext, strings.NewReader("0123\n")); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.MkdirAll(inbox, 0o755); err != nil {
					t.Fatal(err)
				}
				f, lk, err := fsutil.CreateLocked(filepath.Join(inbox, dataset.NewName(tt.ext)))
				if err != nil {
					t.Fatal(err)
				}
				defer lk.Close()
				defer f.Abort()
				p = f.Name()
			}
			r, err := Run(context.Background(), d.Dir, now, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, other := r.Pending, r.Spooling
			if !tt.whole {
				got, other = r.Spooling, r.Pending
			}
			if len(got) != 1 || got[0] != p || len(other) != 0 || len(r.Rejected)+len(r.Partial) != 0 {
				t.Fatalf("pending %v, spooling %v, rejected %v, partial %v: want %s alone", r.Pending, r.Spooling, r.Rejected, r.Partial, p)
			}
			var out bytes.Buffer
			r.Print(&out)
			if !strings.Contains(out.String(), tt.want+p+"\n") {
				t.Fatalf("text lacks\n%s%s\n%s", tt.want, p, out.String())
			}
		})
	}
}

// TestNoInbox: a dataset without DIR/inbox (removed by hand once its .bad
// files were dealt with, or a copy made without it) has an empty inbox.
func TestNoInbox(t *testing.T) {
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(d.Dir, "inbox")); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), d.Dir, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rejected)+len(r.Partial)+len(r.Pending)+len(r.Spooling) != 0 {
		t.Fatalf("inbox lists %v %v %v %v", r.Rejected, r.Partial, r.Pending, r.Spooling)
	}
}
