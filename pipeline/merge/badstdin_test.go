package merge

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestBadStdinSetAside: bad results on stdin are kept as
// inbox/merge/*.results.bad, and the error says where, joined with --data
// as given (here a relative path), as dedup's does; empty stdin holds
// nothing worth keeping, leaves nothing behind and is named "stdin", not
// after a spool that is gone.
func TestBadStdinSetAside(t *testing.T) {
	for _, tt := range []struct {
		name, stdin string
		kept        bool
	}{
		{"junk", "junk\n", true},
		{"empty", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(hashAt(0x42, 1), t0)})
			t.Chdir(filepath.Dir(dir))
			data := filepath.Base(dir)
			o := DefaultOptions()
			o.Data, o.Now, o.Inputs, o.Stdin = data, tm(t0), []string{"-"}, strings.NewReader(tt.stdin)
			_, err := Run(t.Context(), o)
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v, want bad input", err)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, inboxDir))
			if !tt.kept {
				for _, e := range ents {
					t.Errorf("left in the inbox: %s", e.Name())
				}
				if want := "merge: stdin: empty input (nothing came through the pipe"; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("err = %v, want it to start %q", err, want)
				}
				if strings.Contains(err.Error(), "set aside") || strings.Contains(err.Error(), "inbox") {
					t.Errorf("err = %v, names a file it does not keep", err)
				}
				return
			}
			if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".results.bad") {
				t.Fatalf("inbox holds %v, want the input set aside", ents)
			}
			kept := filepath.Join(data, inboxDir, ents[0].Name())
			if want := "merge: stdin: neither Parquet nor an Arrow IPC stream of fetch results (set aside as " + kept + ")"; err.Error() != want {
				t.Fatalf("err = %v, want %q", err, want)
			}
			if b, _ := os.ReadFile(kept); !bytes.Equal(b, []byte(tt.stdin)) {
				t.Fatalf("kept %q", b)
			}
		})
	}
}
