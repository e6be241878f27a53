package status

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
)

// notOurs starts the text line of a foreign file under DIR/inbox.
const notOurs = "not ours, left alone (no run wrote it, and dedup and merge never read it: they take only their own " +
	"part-*.spool from inbox/ and part-*.results from inbox/merge/; apply it by naming it, or move it out): "

// TestForeignInInbox: status lists what under DIR/inbox no run wrote,
// which dedup and merge leave alone and never read (they take only their
// own spools there), in the text and in JSON (foreign_files), and none of
// the names the tool itself writes there: it listed none of them, so an
// operator never saw a file copied there by hand. A folder but
// inbox/merge is listed once, not walked.
func TestForeignInInbox(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	spool, results := dataset.NewName(".spool"), dataset.NewName(".results")
	// Every name dedup, merge, Salvage, KeepCut, keepTail and crawl-pass
	// give what they leave under DIR/inbox.
	ours := []string{
		spool, "merge/" + results, // whole spools
		fsutil.TempPrefix + spool + "-L0123456789ab", "merge/" + fsutil.TempPrefix + results + "-L0123456789ab", // being written
		fsutil.TempPrefix + spool + "-cut", // KeepCut's, before it is cut
		dataset.PartialPrefix + "0011.arrow", dataset.PartialPrefix + "0012.txt", dataset.PartialPrefix + "0013.gz",
		"merge/" + dataset.PartialPrefix + "0014.arrow", // Salvage's, KeepCut's
		spool + ".bad", "merge/" + results + ".bad", // SetAside's
		fsutil.TempPrefix + spool + "-123.bad",               // a Parquet spool cut short
		spool + dataset.CutSuffix,                            // KeepCut's cut message
		fsutil.TempPrefix + spool + dataset.CutSuffix + "-1", // ... being written
		dataset.PartialPrefix + "0011.arrow.bad",             // a partial input applied by hand, bad
		"crawl-pass-20260601T0000Z-observations.arrows.bad", "merge/crawl-pass-20260601T0000Z-results.arrows.bad",
	}
	for _, tc := range []struct {
		name  string
		files []string // under DIR/inbox
		want  []string // foreign, under DIR/inbox
	}{
		{"only ours", ours, nil},
		{"a file copied in", append(slices.Clone(ours), "obs.parquet", "merge/results.arrows", "README.txt"),
			[]string{"README.txt", "merge/results.arrows", "obs.parquet"}},
		{"a spool in the other stage's inbox", []string{"part-0123456789abcdef.results", "merge/part-0123456789abcdef.spool"},
			[]string{"merge/part-0123456789abcdef.spool", "part-0123456789abcdef.results"}},
		{"a folder", []string{"old/CURRENT", "old/manifests/00000001.json", "merge/sub/x.arrow"},
			[]string{"merge/sub/", "old/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			inbox := filepath.Join(d.Dir, "inbox")
			for _, f := range tc.files {
				p := filepath.Join(inbox, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Run(context.Background(), d.Dir, now, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{}
			for _, f := range tc.want {
				p := filepath.Join(inbox, filepath.FromSlash(f))
				if strings.HasSuffix(f, "/") {
					p += string(filepath.Separator)
				}
				want = append(want, p)
			}
			if !slices.Equal(r.Foreign, want) {
				t.Fatalf("foreign %q, want %q", r.Foreign, want)
			}
			var out bytes.Buffer
			r.Print(&out)
			if got := strings.Count(out.String(), "not ours"); got != len(want) {
				t.Errorf("text has %d \"not ours\" lines, want %d:\n%s", got, len(want), out.String())
			}
			for _, p := range want {
				if !strings.Contains(out.String(), notOurs+p+"\n") {
					t.Errorf("text lacks\n%s%s\n%s", notOurs, p, out.String())
				}
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Foreign []string `json:"foreign_files"`
			}
			if err := json.Unmarshal(b, &m); err != nil || !slices.Equal(m.Foreign, want) {
				t.Errorf("JSON foreign_files %q (%v), want %q", m.Foreign, err, want)
			}
		})
	}
}

// TestManyForeignFiles: the text lists the first foreignLines foreign
// files and counts the others; JSON has them all.
func TestManyForeignFiles(t *testing.T) {
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(d.Dir, "inbox")
	const n = foreignLines + 5
	for i := range n {
		if err := os.WriteFile(filepath.Join(inbox, fmt.Sprintf("copy-%02d.parquet", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Run(context.Background(), d.Dir, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Foreign) != n {
		t.Fatalf("foreign %q, want %d files", r.Foreign, n)
	}
	var out bytes.Buffer
	r.Print(&out)
	text := out.String()
	last := fmt.Sprintf("not ours, left alone: 5 more files under %s (--format json lists them all)\n", inbox)
	if strings.Count(text, notOurs) != foreignLines || !strings.Contains(text, last) ||
		!strings.Contains(text, notOurs+filepath.Join(inbox, "copy-09.parquet")+"\n") || strings.Contains(text, "copy-10") {
		t.Fatalf("text lists the foreign files as\n%s\nwant the first %d, then %q", text, foreignLines, last)
	}
}
