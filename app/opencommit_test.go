package app

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
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

// TestOlderFormatBadInputKeepsMigration: a writer opening a dataset of
// an older format migrates it in a commit of its own before it reads its
// input, and that commit stays when the run then exits 2 on bad input
// (the migration rewrites the state's files: it cannot be folded into
// the run's commit). The EXIT STATUS of each writer, and the top-level
// one, say so: they said "nothing committed".
func TestOlderFormatBadInputKeepsMigration(t *testing.T) {
	for _, cmd := range []string{"dedup", "merge", "plan-retries"} {
		t.Run(cmd, func(t *testing.T) {
			dir, data := seedDataset(t)
			datasettest.SetFormatVersion(t, data, dataset.FormatVersion-1)
			before := manifestNames(t, data)
			args := []string{cmd, "--data", data, writeFile(t, dir, "in.parquet", "PAR1 cut short")}
			if cmd == "plan-retries" {
				writeFile(t, data, "policy.json", "{bad")
				args = []string{cmd, "--data", data, "--limit", "1", "-o", filepath.Join(dir, "jobs.parquet")}
			}
			if _, stderr, code := runMain(t, args...); code != 2 {
				t.Fatalf("%v: exit %d, want 2:\n%s", args, code, stderr)
			}
			if got := manifestNames(t, data); len(got) != len(before)+1 {
				t.Fatalf("manifests %v after exit 2, want the migration's beside %v", got, before)
			}
			if _, m := currentWriter(t, data); !strings.HasPrefix(m, "migrate ") {
				t.Fatalf("the snapshot after exit 2 is by %q, want the migration's", m)
			}
			if row := exitRow(t, helpOf(t, cmd), 2); !strings.Contains(row, "nothing committed but a migration") {
				t.Errorf("%s's EXIT STATUS 2 does not say that it keeps a migration: %q", cmd, row)
			}
		})
	}
	if row := exitRow(t, helpOf(t), 2); !strings.Contains(row, "nothing committed but a migration") {
		t.Errorf("the top-level EXIT STATUS 2 does not say that it keeps a migration: %q", row)
	}
}

// exitRow is the text of status code's row in help's EXIT STATUS, its
// wrapped lines joined by single spaces.
func exitRow(t *testing.T, help string, code int) string {
	t.Helper()
	i := strings.Index(help, "EXIT STATUS:")
	if i < 0 {
		t.Fatalf("no EXIT STATUS:\n%s", help)
	}
	rowStart := regexp.MustCompile(`^\s+([0-9]+)\s{2,}(.*)$`)
	var row []string
	in := false
	for _, line := range strings.Split(help[i:], "\n")[1:] {
		if strings.TrimSpace(line) == "" {
			break
		}
		if m := rowStart.FindStringSubmatch(line); m != nil {
			in = m[1] == fmt.Sprint(code)
			if in {
				row = append(row, m[2])
			}
			continue
		}
		if in {
			row = append(row, strings.TrimSpace(line))
		}
	}
	if row == nil {
		t.Fatalf("no row %d in EXIT STATUS:\n%s", code, help[i:])
	}
	return strings.Join(row, " ")
}

// currentWriter is data's current snapshot number and its writer.
func currentWriter(t *testing.T, data string) (snap int64, writer string) {
	t.Helper()
	name, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(data, "manifests", strings.TrimSpace(string(name))))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Snapshot int64  `json:"snapshot"`
		Writer   string `json:"writer"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Snapshot, m.Writer
}
