package dedup

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/hashlist"
	"github.com/infohash/infohash/formats/schema"
)

// FuzzReadHashList reads arbitrary bytes as dedup's hash list (stdin or a
// .txt input) and checks it against a reference: the list cut into lines
// by hand (\n, a \r before it dropped, a byte order mark before the first
// line) and each line read by hashlist.LineHashes. readHashList, with its
// fast path for 40 hex digits, emits the hashes of every line up to the
// first that is no entry, stamped at the time it was given as imported,
// and then fails naming that line: a CutLineError (where the line begins,
// the list's length) when no newline ends it.
func FuzzReadHashList(f *testing.F) {
	const hx = "0123456789abcdef0123456789ABCDEF01234567"
	const v2 = "1220" + hx + "0123456789abcdef01234567"
	for _, s := range []string{
		hx + "\n" + hx + "\r\n",
		"\ufeff" + hx + "\n# note\n\n  " + strings.ToLower(hx) + " \n",
		"magnet:?xt=urn:btih:" + hx + "&xt=urn:btmh:" + v2 + "\n",
		`{"infoHash":"` + hx + `","name":"x","files":[]}` + "\n",
		hx + "\n" + hx[:20],              // cut in its last line
		hx + "\nzz" + hx[2:] + "\n" + hx, // a bad 40-character line
		"\ufeff\ufeff" + hx + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []schema.Observation
		n, err := readHashList("l.txt", bytes.NewReader(data), 42, func(o schema.Observation) { got = append(got, o) })
		var want []hashlist.Hash
		var wantErr error
		rest, line, start := data, int64(0), 0
		for len(rest) > 0 && wantErr == nil {
			l, after, ended := bytes.Cut(rest, []byte("\n"))
			if len(l) > hashlist.MaxLine {
				return // the scanner's limit, which TestHashListLimit checks
			}
			line++
			if line == 1 {
				l = bytes.TrimPrefix(l, []byte("\ufeff"))
			}
			hs, lerr := hashlist.LineHashes(string(bytes.TrimSuffix(l, []byte("\r"))))
			switch {
			case lerr != nil && !ended:
				wantErr = &hashlist.CutLineError{Name: "l.txt", Line: line, Whole: int64(start), Size: int64(len(data)), Err: lerr}
			case lerr != nil:
				wantErr = fmt.Errorf("l.txt:%d: %w", line, lerr)
			}
			if lerr == nil {
				want = append(want, hs...)
			}
			start += len(rest) - len(after)
			rest = after
		}
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%q: err %v, want %v", data, err, wantErr)
		}
		if wc, ok := hashlist.AsCutLine(wantErr); ok {
			if gc, ok := hashlist.AsCutLine(err); !ok || gc.Line != wc.Line || gc.Whole != wc.Whole || gc.Size != wc.Size {
				t.Fatalf("%q: err %#v, want %#v", data, err, wc)
			}
		} else if _, ok := hashlist.AsCutLine(err); ok {
			t.Fatalf("%q: a cut line: %v", data, err)
		}
		if n != int64(len(got)) || len(got) != len(want) {
			t.Fatalf("%q: %d hashes counted, %d emitted, want %d", data, n, len(got), len(want))
		}
		for i, o := range got {
			w := want[i]
			if o.InfoHash != w.H || !bytes.Equal(o.InfoHashV2, w.V2) || o.HashType != w.Type || o.ObservedAt != 42 || o.Source != schema.SourceImport {
				t.Fatalf("%q: hash %d is %+v, want %+v", data, i, o, w)
			}
		}
	})
}
