package status

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestJSONPathsAbsolute: status --format json of a DIR given relative
// has dir and every path it lists under DIR absolute, as state_glob is,
// so that a consumer reading it from another folder finds them (they
// were as given: 'rel/data/inbox/x.bad'). A folder listed as foreign
// keeps its trailing separator. The text keeps DIR as given.
func TestJSONPathsAbsolute(t *testing.T) {
	sep := string(filepath.Separator)
	for _, tt := range []struct{ name, cwd, rel string }{
		{"relative", "", "rel/data"},
		{"dot", "rel/data", "."},
		{"dot slash and a trailing slash", "", "./rel/data/"},
		{"up and down", "rel/x", "../data"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			cwd := filepath.Join(top, tt.cwd)
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(cwd)
			if err := os.MkdirAll(tt.rel, 0o755); err != nil {
				t.Fatal(err)
			}
			datasettest.CommitState(t, tt.rel, schema.State{InfoHash: schema.Hash{0, 1}, HashType: 1,
				MetadataStatus: "new", Tier: "hot"}, 3)
			abs := filepath.Join(cwd, tt.rel)
			files := map[string]string{ // JSON key: a file under DIR it lists
				"rejected_inputs": "inbox/crawl-pass-7-observations.arrows.bad",
				"partial_inputs":  "inbox/partial-part-1.spool",
				"pending_inputs":  "inbox/part-2.spool",
				"spooling_inputs": "inbox/.tmp-part-3.spool-x",
				"foreign_files":   "inbox/copied.parquet",
				"unapplied_work":  "work/20260601T000000Z/observations.arrows",
				"unpublished":     "manifests/000000000002.json",
				"staging":         "staging/4242-0a0b0c0d0e0f/.owner",
			}
			for _, f := range files {
				p := filepath.Join(tt.rel, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(filepath.Join(tt.rel, "inbox", "by-hand"), 0o755); err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), tt.rel, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Dir != tt.rel {
				t.Errorf("report's dir %q, want it as given (%q) for the text", r.Dir, tt.rel)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m["dir"] != abs {
				t.Errorf("dir %v, want %q", m["dir"], abs)
			}
			want := map[string][]string{}
			for key, f := range files {
				p := filepath.Join(abs, filepath.FromSlash(f))
				if key == "staging" {
					p = filepath.Dir(p)
				}
				want[key] = append(want[key], p)
			}
			want["foreign_files"] = []string{filepath.Join(abs, "inbox", "by-hand") + sep, want["foreign_files"][0]}
			for key, w := range want {
				var got []string
				list, _ := m[key].([]any)
				for _, v := range list {
					s, _ := v.(string)
					got = append(got, s)
				}
				if !slices.Equal(got, w) {
					t.Errorf("%s %q, want %q", key, got, w)
				}
				for _, p := range got {
					if _, err := os.Stat(p); err != nil && !strings.HasSuffix(p, sep) {
						t.Errorf("%s: %v", key, err)
					}
				}
			}
		})
	}
}

// TestJSONVerifyPathsAbsolute: --verify's problems name their files by
// an absolute path in JSON too.
func TestJSONVerifyPathsAbsolute(t *testing.T) {
	top := t.TempDir()
	t.Chdir(top)
	datasettest.CommitState(t, "data", schema.State{InfoHash: schema.Hash{0, 1}, HashType: 1,
		MetadataStatus: "new", Tier: "hot"}, 3)
	parts, err := filepath.Glob(filepath.Join("data", "state", "current", "prefix=00", "*.parquet"))
	if err != nil || len(parts) == 0 {
		t.Fatalf("no state file (%v)", err)
	}
	if err := os.Truncate(parts[0], 10); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), "data", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Verified struct {
			Problems []struct {
				Path string `json:"path"`
			} `json:"problems"`
		} `json:"verified"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Verified.Problems) == 0 {
		t.Fatalf("no problem found: %s", b)
	}
	for _, p := range m.Verified.Problems {
		if !filepath.IsAbs(p.Path) || !strings.HasPrefix(p.Path, top) {
			t.Errorf("problem's path %q, want it absolute, under %s", p.Path, top)
		}
	}
	if len(r.Verified.Problems) > 0 && filepath.IsAbs(r.Verified.Problems[0].Path) {
		t.Errorf("the report's own problem path %q was changed", r.Verified.Problems[0].Path)
	}
}
