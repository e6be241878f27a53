package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestCopyBadInputCommitsNothing: a writer run on a copy of a dataset
// (`cp -a`: another folder than its manifest was made in) that ends with
// exit 2 on bad input commits nothing, as the EXIT STATUS says: Open
// committed the copy's new dataset_id before the run read its input, so
// a truncated Parquet, a wrong-schema input or a bad policy.json left a
// snapshot "by copy" behind. The id is drawn by the first run that
// commits (its own commit), which a later good dedup still does.
func TestCopyBadInputCommitsNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		// setup prepares the copy at data (files in dir) and returns the
		// command's arguments.
		setup func(t *testing.T, dir, data string) []string
	}{
		{"dedup, a truncated Parquet", func(t *testing.T, dir, data string) []string {
			return []string{"dedup", "--data", data, writeFile(t, dir, "obs.parquet", "PAR1 cut short")}
		}},
		{"dedup, two inputs, one truncated", func(t *testing.T, dir, data string) []string {
			good := writeFile(t, dir, "h.txt", "0123456789abcdef0123456789abcdef01234599\n")
			return []string{"dedup", "--data", data, good, writeFile(t, dir, "obs.parquet", "PAR1 cut short")}
		}},
		{"dedup, a bad policy.json", func(t *testing.T, dir, data string) []string {
			writeFile(t, data, "policy.json", "{bad")
			return []string{"dedup", "--data", data, writeFile(t, dir, "h.txt", "0123456789abcdef0123456789abcdef01234599\n")}
		}},
		{"merge, a truncated results file", func(t *testing.T, dir, data string) []string {
			return []string{"merge", "--data", data, writeFile(t, dir, "results.parquet", "PAR1 cut short")}
		}},
		{"merge, a results file of another schema", func(t *testing.T, dir, data string) []string {
			return []string{"merge", "--data", data, writeFile(t, dir, "results.csv", "info_hash\n0123\n")}
		}},
		{"plan-retries, a bad policy.json", func(t *testing.T, dir, data string) []string {
			writeFile(t, data, "policy.json", "{bad")
			return []string{"plan-retries", "--data", data, "--limit", "1", "-o", filepath.Join(dir, "jobs.parquet")}
		}},
		{"plan-retries, a bad blocklist", func(t *testing.T, dir, data string) []string {
			writeFile(t, data, "blocklist", "not a hash\n")
			return []string{"plan-retries", "--data", data, "--limit", "1", "-o", filepath.Join(dir, "jobs.parquet")}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, orig := seedDataset(t)
			data := filepath.Join(t.TempDir(), "copy")
			if out, err := exec.Command("cp", "-a", orig, data).CombinedOutput(); err != nil {
				t.Fatalf("cp -a: %v\n%s", err, out)
			}
			id, copied := copyStatus(t, data)
			if !copied {
				t.Fatal("the copy does not read as one")
			}
			args := tt.setup(t, dir, data)
			before := manifestNames(t, data)
			current, err := os.ReadFile(filepath.Join(data, "CURRENT"))
			if err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := runMain(t, args...); code != 2 {
				t.Fatalf("%v: exit %d, want 2:\n%s", args, code, stderr)
			}
			if got := manifestNames(t, data); !slices.Equal(got, before) {
				t.Fatalf("exit 2 left the manifests %v, want %v (nothing committed)", got, before)
			}
			if now, err := os.ReadFile(filepath.Join(data, "CURRENT")); err != nil || string(now) != string(current) {
				t.Fatalf("CURRENT %q (%v), want %q", now, err, current)
			}
			if got, still := copyStatus(t, data); got != id || !still {
				t.Fatalf("after exit 2: id %s, copied %v; want the original's %s, still a copy", got, still, id)
			}
		})
	}
	// A run that commits gives the copy its id, in its own commit.
	dir, orig := seedDataset(t)
	data := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", orig, data).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	id, _ := copyStatus(t, data)
	before := manifestNames(t, data)
	h := writeFile(t, dir, "more.txt", "0123456789abcdef0123456789abcdef01234599\n")
	if _, stderr, code := runMain(t, "dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", h); code != 0 {
		t.Fatalf("dedup on the copy: exit %d:\n%s", code, stderr)
	}
	if got, still := copyStatus(t, data); got == id || still {
		t.Fatalf("after dedup committed on the copy: id %s, copied %v; want a new id", got, still)
	}
	if got := manifestNames(t, data); len(got) != len(before)+1 {
		t.Fatalf("dedup on the copy left the manifests %v, want one more than %v (the id in dedup's commit)", got, before)
	}
}

// writeFile writes body to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// manifestNames lists data's manifests, sorted.
func manifestNames(t *testing.T, data string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(data, "manifests", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// copyStatus is data's dataset_id and whether status calls it a copy
// (its report is written with a bad blocklist too, exit 1).
func copyStatus(t *testing.T, data string) (id string, copied bool) {
	t.Helper()
	out, stderr, code := runMain(t, "status", "--data", data, "--format", "json")
	if code != 0 && code != 1 {
		t.Fatalf("status: exit %d:\n%s", code, stderr)
	}
	var r struct {
		DatasetID string `json:"dataset_id"`
		Copied    bool   `json:"copied"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r.DatasetID, r.Copied
}
