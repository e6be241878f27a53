package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// manifestJSON is a manifest as a JSON object, to damage.
type manifestJSON map[string]any

func (m manifestJSON) tables() map[string]any { return m["tables"].(map[string]any) }

func (m manifestJSON) table(name string) map[string]any { return m.tables()[name].(map[string]any) }

func (m manifestJSON) partitions(name string) map[string]any {
	return m.table(name)["partitions"].(map[string]any)
}

// firstKey is the first partition key of table name.
func (m manifestJSON) firstKey(name string) string {
	var keys []string
	for k := range m.partitions(name) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[0]
}

// TestDamagedManifestThroughTheCommands: whatever damage a manifest has
// that still parses, every command that opens the dataset (as --data or as
// merge --from's other dataset) fails at once with exit 1 and one line
// naming the manifest and what is wrong with it, and leaves both datasets
// as they were: no panic (exit 2, as bad input), no empty table read for a
// lost one, no file opened outside DIR, no commit.
func TestDamagedManifestThroughTheCommands(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "tmpl")
	seedHashes(t, tmpl, 40, 21)
	other := filepath.Join(t.TempDir(), "other")
	seedHashes(t, other, 10, 22)
	fresh := filepath.Join(t.TempDir(), "fresh.txt") // hashes neither dataset has
	if err := os.WriteFile(fresh, []byte(strings.Repeat("ab", 20)+"\n"+strings.Repeat("cd", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const manifest = "manifests/000000000001.json"
	cases := []struct {
		name   string
		damage func(m manifestJSON) // nil: CURRENT names manifest 99
		want   string               // after "dataset: DATA/" (DATA the damaged one)
	}{
		{"state null", func(m manifestJSON) { m.tables()["state"] = nil }, manifest + ": corrupt manifest: table state is null"},
		{"torrents null", func(m manifestJSON) { m.tables()["torrents"] = nil }, manifest + ": corrupt manifest: table torrents is null"},
		{"peers null", func(m manifestJSON) { m.tables()["peers"] = nil }, manifest + ": corrupt manifest: table peers is null"},
		{"leases null", func(m manifestJSON) { m.tables()["leases"] = nil }, manifest + ": corrupt manifest: table leases is null"},
		{"ledger null", func(m manifestJSON) { m.tables()["ledger"] = nil }, manifest + ": corrupt manifest: table ledger is null"},
		{"ledger missing", func(m manifestJSON) { delete(m.tables(), "ledger") }, manifest + ": corrupt manifest: table ledger is missing"},
		{"state partitions missing", func(m manifestJSON) { delete(m.table("state"), "partitions") },
			manifest + ": corrupt manifest: table state: no partitions (missing or null)"},
		{"state partitions null", func(m manifestJSON) { m.table("state")["partitions"] = nil },
			manifest + ": corrupt manifest: table state: no partitions (missing or null)"},
		{"state partition null", func(m manifestJSON) { m.partitions("state")[m.firstKey("state")] = nil },
			manifest + `: corrupt manifest: table state: partition "KEY" has no files`},
		{"state dir outside DIR", func(m manifestJSON) { m.table("state")["dir"] = "../../.." },
			manifest + `: corrupt manifest: table state: dir "../../.." is not state/v/NNNNNNNNNNNN`},
		{"state partition key zz", func(m manifestJSON) {
			p, k := m.partitions("state"), m.firstKey("state")
			p["zz"] = p[k]
			delete(p, k)
		}, manifest + `: corrupt manifest: table state: partition key "zz" is not two lowercase hex digits`},
		{"file name with a path", func(m manifestJSON) {
			m.partitions("ledger")[""].([]any)[0].(map[string]any)["name"] = "../../../ledger.parquet"
		}, manifest + `: corrupt manifest: table ledger: partition "": file name "../../../ledger.parquet" is not a plain name ending in .parquet`},
		{"negative rows", func(m manifestJSON) {
			m.partitions("ledger")[""].([]any)[0].(map[string]any)["rows"] = -1
		}, manifest + `: corrupt manifest: table ledger: partition "": file FILE: rows -1`},
		{"CURRENT names a missing manifest", nil, "CURRENT names manifest 000000000099.json, which does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			if out, err := exec.Command("cp", "-a", tmpl, data).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			want := "dataset: " + data + "/" + damageManifest(t, data, c.damage, c.want)
			jobs := filepath.Join(t.TempDir(), "jobs.parquet")
			before, otherBefore := fsutiltest.Tree(t, data), fsutiltest.Tree(t, other)
			for _, args := range [][]string{
				{"status", "--data", data},
				{"status", "--data", data, "--verify"},
				{"export", "--data", data, "--table", "state", "--format", "csv", "-o", "-"},
				{"plan-retries", "--data", data, "-o", jobs},
				{"dedup", "--data", data, fresh},
				{"merge", "--data", other, "--from", data},
				{"merge", "--data", data, "--from", other},
			} {
				r := ih(t, nil, args...)
				line, rest, _ := strings.Cut(r.stderr, "\n")
				if r.code != 1 || !strings.Contains(line, want) || rest != "" || len(r.stdout) != 0 {
					t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 and one line with: %s", strings.Join(args, " "), r.code, r.stderr, want)
				}
			}
			if _, err := os.Stat(jobs); err == nil {
				t.Error("plan-retries wrote jobs")
			}
			sameTree(t, before, fsutiltest.Tree(t, data))
			sameTree(t, otherBefore, fsutiltest.Tree(t, other))
		})
	}
}

// damageManifest applies damage to data's manifest of snapshot 1 (nil:
// points CURRENT at a manifest that does not exist), fills KEY (the first
// state partition) and FILE (the first ledger file) into want, and
// returns it.
func damageManifest(t *testing.T, data string, damage func(manifestJSON), want string) string {
	t.Helper()
	if damage == nil {
		if err := os.WriteFile(filepath.Join(data, "CURRENT"), []byte("000000000099.json\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return want
	}
	path := filepath.Join(data, "manifests", "000000000001.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m manifestJSON
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	file := m.partitions("ledger")[""].([]any)[0].(map[string]any)["name"].(string)
	w := strings.NewReplacer("KEY", m.firstKey("state"), "FILE", file).Replace(want)
	damage(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}
