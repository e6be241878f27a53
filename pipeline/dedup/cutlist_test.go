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
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/status"
)

// cutList is a hash list of n lines of hex hashes (some repeated, a
// comment and a magnet URI among them), and the observations its lines
// give at the clock of run.
func cutList(n int) (string, []schema.Observation) {
	at := t0.Add(2 * time.Hour).UnixMilli()
	var sb strings.Builder
	var obs []schema.Observation
	sb.WriteString("# a capture's hashes\n")
	for i := range n {
		var h schema.Hash
		h[0], h[1], h[19] = byte(i*37), byte(i%7), 0x5a
		if i%3 == 0 {
			fmt.Fprintf(&sb, "magnet:?xt=urn:btih:%s&dn=t%d\r\n", schema.Hex(h), i)
		} else {
			fmt.Fprintf(&sb, "%s\n", schema.Hex(h))
		}
		obs = append(obs, schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: at, Source: schema.SourceImport})
	}
	return sb.String(), obs
}

// TestDedupCutList: a writer killed in the middle of a line leaves dedup
// a hash list on stdin whose last line, which no newline ends, is not an
// entry. Its whole lines are not applied (a list sent again whole would
// count them twice) nor set aside with the cut line as bad input: they
// are kept as a partial input, inbox/partial-*.txt, which status lists,
// and the cut line beside it as *.cut.bad; the run exits 2 with one line
// saying where and how to apply them, which works. A last line without a
// newline that is an entry is applied as before; a bad last line that a
// newline ends, and a cut line with no whole line before it, are bad
// input set aside whole, as before; so is a leftover spool's cut list
// kept apart as stdin's is.
func TestDedupCutList(t *testing.T) {
	list, obs := cutList(40)
	const cutLine = "0123456789abcdef0123"
	for _, tt := range []struct {
		name     string
		in       string
		leftover bool // put in the inbox by a run that died, not given on stdin
		partial  int  // lines of obs in the partial input; -1: applied whole (0 rows: set aside whole)
		rows     int  // applied
	}{
		{"last line cut", list + cutLine, false, 40, 0},
		{"last line cut, CRLF", list + cutLine + "\r", false, 40, 0},
		{"last line cut inside a magnet URI", list + "magnet:?xt=urn:btih:" + cutLine, false, 40, 0},
		{"leftover spool, last line cut", list + cutLine, true, 40, 0},
		{"last line whole, without newline", strings.TrimSuffix(list, "\n"), false, -1, 40},
		{"last line bad, with its newline", list + cutLine + "\n", false, 0, 0},
		{"the only line cut", cutLine, false, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			inbox := filepath.Join(data, "inbox")
			var err error
			if tt.leftover {
				if _, err := run(t, data, nil, writeObs(t, t.TempDir(), obs[:1])); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(inbox, "part-0a1b.spool"), []byte(tt.in), 0o644); err != nil {
					t.Fatal(err)
				}
				_, err = run(t, data, nil)
			} else {
				_, err = run(t, data, func(o *Options) { o.Stdin = trickle([]byte(tt.in), 97) }, "-")
			}
			switch {
			case tt.partial < 0:
				if err != nil {
					t.Fatal(err)
				}
				compare(t, readState(t, data), truth(obs[:tt.rows]))
				return
			case tt.partial == 0:
				if exitcode.Of(err) != exitcode.Usage || !namesSetAside(err, data) {
					t.Fatalf("err = %v, want bad input set aside whole", err)
				}
				ents, _ := os.ReadDir(inbox)
				if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".spool"+badSuffix) {
					t.Fatalf("inbox holds %v, want the input set aside whole", ents)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("exit %d (%v), want 2", exitcode.Of(err), err)
			}
			partials, _ := filepath.Glob(filepath.Join(inbox, dataset.PartialPrefix+"*.txt"))
			tails, _ := filepath.Glob(filepath.Join(inbox, "*"+dataset.CutSuffix))
			if ents, _ := os.ReadDir(inbox); len(partials) != 1 || len(tails) != 1 || len(ents) != 2 {
				t.Fatalf("inbox holds %v, want a partial input and the cut line", ents)
			}
			part, _ := os.ReadFile(partials[0])
			tail, _ := os.ReadFile(tails[0])
			if !bytes.Equal(append(bytes.Clone(part), tail...), []byte(tt.in)) || !bytes.HasSuffix(part, []byte("\n")) {
				t.Fatalf("kept %d + %d bytes, not the %d of the list", len(part), len(tail), len(tt.in))
			}
			msg := err.Error()
			for _, w := range []string{fmt.Sprintf("the list ends in a cut line: line %d, which no newline ends, is not an entry", 42),
				"none applied: the 41 complete lines before it are kept as " + partials[0] + " ",
				fmt.Sprintf(`"infohash dedup --data %s %s"`, data, partials[0]),
				fmt.Sprintf("the %d bytes of the cut line as %s", len(tail), tails[0])} {
				if !strings.Contains(msg, w) {
					t.Errorf("err = %q, want it to say %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "set aside as") {
				t.Errorf("err = %q, want one line, nothing set aside as bad input", msg)
			}
			r, err := status.Run(context.Background(), data, t0, status.Options{})
			if err != nil || !slices.Equal(r.Partial, partials) || !slices.Equal(r.Rejected, tails) {
				t.Fatalf("status lists partial %v, rejected %v (%v)", r.Partial, r.Rejected, err)
			}
			before := readState(t, data)
			if _, err := run(t, data, nil, partials[0]); err != nil {
				t.Fatalf("applying the partial input: %v", err)
			}
			want := truth(obs[:tt.partial])
			if tt.leftover {
				want = truth(obs[:1], obs[:tt.partial])
				if len(before) != 1 {
					t.Fatalf("the cut list was applied: %d hashes", len(before))
				}
			}
			compare(t, readState(t, data), want)
			if _, err := os.Stat(partials[0]); !os.IsNotExist(err) {
				t.Fatalf("the applied partial input is still there (%v)", err)
			}
		})
	}
}

// TestDedupCutListFileNamed: a list named as an INPUT whose last line is
// cut is bad input, as before: nothing applied, the file left as it is,
// nothing kept in the inbox.
func TestDedupCutListFileNamed(t *testing.T) {
	list, _ := cutList(10)
	path := filepath.Join(t.TempDir(), "hashes.txt")
	in := list + "0123456789abcdef0123"
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "ds")
	_, err := run(t, data, nil, path)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), path+":12: ") || strings.Contains(err.Error(), "kept") {
		t.Fatalf("err = %v, want bad input naming line 12", err)
	}
	if b, _ := os.ReadFile(path); string(b) != in {
		t.Fatalf("the input was touched: %d bytes", len(b))
	}
	if ents, _ := os.ReadDir(filepath.Join(data, "inbox")); len(ents) != 0 {
		t.Fatalf("inbox holds %v", ents)
	}
}
