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
// inbox/merge/*.results.bad, and the error says where, as dedup's does;
// empty stdin holds nothing worth keeping and leaves nothing behind.
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
			o := DefaultOptions()
			o.Data, o.Now, o.Inputs, o.Stdin = dir, tm(t0), []string{"-"}, strings.NewReader(tt.stdin)
			_, err := Run(t.Context(), o)
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v, want bad input", err)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, inboxDir))
			if !tt.kept {
				for _, e := range ents {
					t.Errorf("left in the inbox: %s", e.Name())
				}
				if !strings.Contains(err.Error(), "empty input (nothing came through the pipe") {
					t.Errorf("err = %v, want it to say the pipe brought nothing", err)
				}
				if strings.Contains(err.Error(), "set aside") {
					t.Errorf("err = %v, says it set aside nothing", err)
				}
				return
			}
			if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".results.bad") {
				t.Fatalf("inbox holds %v, want the input set aside", ents)
			}
			if want := "(set aside as " + filepath.Join(inboxDir, ents[0].Name()) + ")"; !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want it to say %q", err, want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, inboxDir, ents[0].Name())); !bytes.Equal(b, []byte(tt.stdin)) {
				t.Fatalf("kept %q", b)
			}
		})
	}
}
