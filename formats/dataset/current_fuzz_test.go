package dataset

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCurrent reads DIR/CURRENT, the pointer to the latest manifest, as
// whatever was written over it or left there: it names manifest 1, the
// one the dataset holds, exactly when it is that name (blanks around it
// allowed, within maxPointer bytes); anything else is one line of UTF-8 that quotes no more than
// an excerpt of it.
func FuzzCurrent(f *testing.F) {
	for _, s := range []string{"000000000001.json\n", " 000000000001.json", "1.json", "000000000002.json\n", "",
		"../manifests/000000000001.json", "000000000001.json\x00", "info_hash,info_hash_v2\n" + strings.Repeat("ab", 40),
		"PAR1\x00\x01\x02", strings.Repeat("9", 19) + ".json", "\xff\xfe0.json"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		f.Fatal(err)
	}
	good, err := json.Marshal(sampleManifest())
	if err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests", manifestName(1)), good, 0o644); err != nil {
		f.Fatal(err)
	}
	d := &Dataset{Dir: dir, readOnly: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, "CURRENT"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := d.Current()
		names := len(b) <= maxPointer && string(bytes.TrimSpace(b)) == manifestName(1)
		if err == nil {
			if !names || m.Snapshot != 1 {
				t.Fatalf("CURRENT %q: read snapshot %d", b, m.Snapshot)
			}
			return
		}
		if names {
			t.Fatalf("CURRENT %q: %v", b, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "dataset: "+dir) || strings.Contains(msg, "\n") || !utf8.ValidString(msg) ||
			len(msg) > len(dir)+4*excerptLen+100 {
			t.Fatalf("CURRENT %q: error %q: want one line of UTF-8 with an excerpt", b, msg)
		}
	})
}
