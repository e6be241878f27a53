package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestMissingInputSameWords: a named input that is not there is reported
// alike by dedup, fetch and merge, "CMD: PATH: no such file or
// directory" (fetch said "open PATH: ...", dedup and merge "stat PATH:
// ..."), and a symbolic link to nothing says where it leads. Each exits 2
// and writes its --stats-json (exit_status 2), as before.
func TestMissingInputSameWords(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	list := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(list, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "dedup", "--data", data, list)
	missing := filepath.Join(dir, "nothere.parquet")
	link := filepath.Join(dir, "link.parquet")
	if err := os.Symlink(missing, link); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "r.parquet")
	for _, tt := range []struct {
		name string
		args []string // the input is appended
		in   string
		want string
	}{
		{"dedup", []string{"dedup", "--data", data}, missing, "infohash: dedup: " + missing + ": no such file or directory\n"},
		{"fetch", []string{"fetch", "--no-dht", "-o", results}, missing, "infohash: fetch: " + missing + ": no such file or directory\n"},
		{"merge", []string{"merge", "--data", data}, missing, "infohash: merge: " + missing + ": no such file or directory\n"},
		{"dedup link", []string{"dedup", "--data", data}, link, "infohash: dedup: " + link + " is a symbolic link to " + missing + ", which does not exist\n"},
		{"fetch link", []string{"fetch", "--no-dht", "-o", results}, link, "infohash: fetch: " + link + " is a symbolic link to " + missing + ", which does not exist\n"},
		{"merge link", []string{"merge", "--data", data}, link, "infohash: merge: " + link + " is a symbolic link to " + missing + ", which does not exist\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stats := filepath.Join(t.TempDir(), "stats.json")
			args := append(append([]string{}, tt.args...), "--stats-json", stats, tt.in)
			r := ih(t, nil, args...)
			if r.code != 2 || r.stderr != tt.want {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tt.want)
			}
			b, err := os.ReadFile(stats)
			if err != nil {
				t.Fatalf("--stats-json not written: %v", err)
			}
			var got struct {
				ExitStatus int `json:"exit_status"`
			}
			if err := json.Unmarshal(b, &got); err != nil || got.ExitStatus != 2 {
				t.Fatalf("--stats-json %s (%v); want exit_status 2", b, err)
			}
			if _, err := os.Stat(results); err == nil {
				t.Fatalf("%s written", results)
			}
		})
	}
}
