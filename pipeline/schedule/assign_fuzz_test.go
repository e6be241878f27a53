package schedule

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzAssign is "policy set" on a policy file as found: decoded but not
// validated (LoadUnvalidated), so that set can repair it. Assign either
// refuses the path and value, or returns a policy whose text (JSON, as
// Save writes it) decodes back to the same policy, and which every stage
// loads (Parse) whenever it is valid.
func FuzzAssign(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "jitter", "0.1")
	}
	f.Add([]byte(`{"backoff": {"no_peers": []}}`), "backoff.no_peers[0]", "1h")
	f.Add([]byte(`{"backoff": {"no_peers": ["1h"]}}`), "backoff.no_peers", "30m,2h,8x")
	f.Add([]byte(`{"reactivation": {"classes": []}}`), "reactivation.classes", "timeout,no_peers")
	f.Add([]byte(`{"jitter": 7}`), "jitter", "0.2")
	f.Add([]byte(`{"seed": 18446744073709551615}`), "seed", "1e3")
	f.Add([]byte(`{"peer_penalty": {"base": {"rejected": "0"}}}`), "peer_penalty.base.new_class", "1h")
	f.Add([]byte(`{}`), "plan.lease", "1.5h")
	f.Fuzz(func(t *testing.T, file []byte, path, value string) {
		p, err := Decode(file, "F")
		if err != nil {
			return
		}
		q, err := Assign(p, path, value)
		if err != nil {
			return
		}
		back, err := Decode(q.JSON(), "F")
		if err != nil || back.Hash() != q.Hash() {
			t.Fatalf("Assign(%q, %q) wrote a policy that reads back as %v:\n%s", path, value, err, q.JSON())
		}
		if q.Validate() == nil {
			if _, err := Parse(q.JSON(), "F"); err != nil {
				t.Fatalf("Assign(%q, %q): a valid policy that Parse refuses: %v\n%s", path, value, err, q.JSON())
			}
		}
	})
}
