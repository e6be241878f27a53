package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPolicySetFolders: policy set writes LOCK and policy.json only where
// dedup would make a dataset (or into one): a folder of the user's files
// is refused as dedup refuses it (exit 2, one line, nothing written); an
// empty folder, one holding what crawl-pass puts there first and a
// dataset take the policy, and a later dedup makes the dataset with it.
func TestPolicySetFolders(t *testing.T) {
	in := filepath.Join(t.TempDir(), "h.txt")
	if err := os.WriteFile(in, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, dataset := seedDataset(t)
	for _, tc := range []struct {
		name    string
		dir     string   // an existing folder, or "" for a new empty one
		entries []string // made in it first (a trailing / makes a folder)
		refused string   // what the one line says it holds; "" when taken
	}{
		{"empty", "", nil, ""},
		{"crawl-pass folders", "", []string{"work/", "export/", "dht-state/", ".pass.lock"}, ""},
		{"a dataset", dataset, nil, ""},
		{"user files", "", []string{".bashrc", "Documents/", "notes.txt", "z.txt"},
			`".bashrc", "Documents", "notes.txt", 1 more`},
		{"user file beside crawl-pass's", "", []string{"work/", "todo.txt"}, `"todo.txt"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.dir
			if data == "" {
				data = filepath.Join(t.TempDir(), "ih")
				if err := os.Mkdir(data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, e := range tc.entries {
				var err error
				if name, ok := strings.CutSuffix(e, "/"); ok {
					err = os.Mkdir(filepath.Join(data, name), 0o755)
				} else {
					err = os.WriteFile(filepath.Join(data, e), []byte("x\n"), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			before := names(t, data)
			_, stderr, code := runMain(t, "policy", "set", "--data", data, "jitter=0.3")
			if tc.refused != "" {
				want := "infohash: policy set: dataset: " + data + ": not an infohash dataset and not empty (it holds " +
					tc.refused + "); give a new or empty folder\n"
				if code != 2 || stderr != want {
					t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
				}
				if after := names(t, data); !slices.Equal(after, before) {
					t.Fatalf("%s holds %q, want the user's %q", data, after, before)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// The first dedup (or the next) makes the dataset with it.
			if _, stderr, code := runMain(t, "dedup", "--data", data, "--far-now", "--now", "2026-03-02T00:00:00Z", in); code != 0 {
				t.Fatalf("dedup after policy set: exit %d: %s", code, stderr)
			}
			out, stderr, code := runMain(t, "policy", "show", "--data", data)
			if code != 0 || !strings.Contains(out, `"jitter": 0.3,`) {
				t.Fatalf("policy show: exit %d, %s; stdout lacks the policy set:\n%s", code, stderr, out)
			}
		})
	}
}

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestPolicyShowFolders: policy show reads only where policy set writes:
// a folder of the user's files, or one inside a dataset, is not a dataset
// (exit 2, one line, as status says it); an empty folder shows the
// defaults, one policy set wrote into first shows that, a dataset its own.
func TestPolicyShowFolders(t *testing.T) {
	_, dataset := seedDataset(t)
	for _, tc := range []struct {
		name    string
		dir     string   // an existing folder, or "" for a new empty one
		entries []string // made in it first (a trailing / makes a folder)
		set     string   // policy set first: PATH=VALUE
		refused bool
		inside  string // refused, naming the dataset it lies in
		shows   string // in the JSON shown
	}{
		{name: "user files", entries: []string{"notes.txt", "Documents/"}, refused: true},
		{name: "inside a dataset", dir: filepath.Join(dataset, "inbox"), refused: true, inside: dataset},
		{name: "empty", shows: `"jitter": 0.2,`},
		{name: "crawl-pass folders", entries: []string{"work/", ".pass.lock"}, shows: `"jitter": 0.2,`},
		{name: "policy set first", set: "jitter=0.3", shows: `"jitter": 0.3,`},
		{name: "a dataset", dir: dataset, shows: `"jitter": 0.2,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.dir
			if data == "" {
				data = filepath.Join(t.TempDir(), "ih")
				if err := os.Mkdir(data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, e := range tc.entries {
				var err error
				if name, ok := strings.CutSuffix(e, "/"); ok {
					err = os.Mkdir(filepath.Join(data, name), 0o755)
				} else {
					err = os.WriteFile(filepath.Join(data, e), []byte("x\n"), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if tc.set != "" {
				if _, stderr, code := runMain(t, "policy", "set", "--data", data, tc.set); code != 0 {
					t.Fatalf("policy set: exit %d: %s", code, stderr)
				}
			}
			out, stderr, code := runMain(t, "policy", "show", "--data", data)
			if tc.refused {
				want := "infohash: policy show: dataset: " + data + ": not an infohash dataset (no CURRENT file)\n"
				if tc.inside != "" {
					want = strings.TrimSuffix(want, "\n") + "; it lies inside the dataset " + tc.inside + ": give that folder\n"
				}
				if code != 2 || stderr != want || out != "" {
					t.Fatalf("exit %d, stderr %q, stdout %q; want 2 and %q", code, stderr, out, want)
				}
				return
			}
			if code != 0 || !strings.Contains(out, tc.shows) {
				t.Fatalf("exit %d, %s; stdout lacks %s:\n%s", code, stderr, tc.shows, out)
			}
		})
	}
}
