package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputIntoDatasetRefused: an output (-o, --stats-json,
// --metrics-file) naming a file the dataset manages, however spelt, is a
// usage error before any work. export -o DIR/CURRENT used to exit 0 and
// replace the commit pointer, and every later command failed. The rest of
// DIR (DIR/export/) stays writable.
func TestOutputIntoDatasetRefused(t *testing.T) {
	dir, data := seedDataset(t)
	t.Chdir(dir)
	if _, stderr, code := runMain(t, "policy", "show", "--data", data); code != 0 {
		t.Fatalf("policy show: exit %d: %s", code, stderr)
	}
	other := filepath.Join(dir, "other")
	if _, stderr, code := runMain(t, "dedup", "--data", other, "h.txt"); code != 0 {
		t.Fatalf("dedup of a second dataset: exit %d: %s", code, stderr)
	}
	current := filepath.Join(data, "CURRENT")
	before, err := os.ReadFile(current)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{
		{filepath.Join(dir, "link"), current},
		{filepath.Join(dir, "dslink"), data},
		{filepath.Join(dir, "dangling"), filepath.Join(data, "manifests", "999999999999.json")},
	} {
		if err := os.Symlink(l[1], l[0]); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Join(data, "export"), filepath.Join(data, "dht-state"), filepath.Join(data, "leases"), "st"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		args []string
		path string // named in the error
	}{
		{"export over CURRENT", []string{"export", "--data", "ds", "-f", "csv", "-o", "ds/CURRENT"}, "ds/CURRENT"},
		{"export over policy.json", []string{"export", "--data", data, "-f", "csv", "-o", filepath.Join(data, "policy.json")}, "policy.json"},
		{"through ..", []string{"export", "--data", data, "-f", "csv", "-o", "ds/export/../LOCK"}, "ds/export/../LOCK"},
		{"through a link to the file", []string{"export", "--data", data, "-f", "csv", "-o", "link"}, "link"},
		{"through a link to the dir", []string{"export", "--data", data, "-f", "csv", "-o", "dslink/manifests/new.json"}, "dslink/manifests/new.json"},
		{"--data through a link", []string{"export", "--data", "dslink", "-f", "csv", "-o", "ds/CURRENT"}, "ds/CURRENT"},
		{"dangling link into manifests", []string{"export", "--data", data, "-f", "csv", "-o", "dangling"}, "dangling"},
		{"new file in a table", []string{"export", "--data", data, "-o", "ds/state/new.parquet"}, "ds/state/new.parquet"},
		{"new file in the inbox", []string{"export", "--data", data, "-o", "ds/inbox/x.parquet"}, "ds/inbox/x.parquet"},
		{"dht-state", []string{"export", "--data", data, "-f", "csv", "-o", "ds/dht-state/dht-state.json"}, "ds/dht-state/dht-state.json"},
		{"plan-retries jobs", []string{"plan-retries", "--data", data, "-o", "ds/leases/jobs.parquet"}, "ds/leases/jobs.parquet"},
		{"dedup stats", []string{"dedup", "--data", data, "--stats-json", "ds/CURRENT", "h.txt"}, "--stats-json ds/CURRENT"},
		{"status metrics", []string{"status", "--data", data, "--metrics-file", "ds/manifests/m.prom"}, "--metrics-file ds/manifests/m.prom"},
		{"export stats", []string{"export", "--data", data, "-o", "ds/export/x.parquet", "--stats-json", "link"}, "--stats-json link"},
		// fetch has no --data: the dataset the path lies in counts.
		{"fetch without --data", []string{"fetch", "--no-dht", "h.txt", "-o", "ds/CURRENT"}, "ds/CURRENT"},
		{"fetch stats without --data", []string{"fetch", "--no-dht", "h.txt", "-o", "r.parquet", "--stats-json", "ds/manifests/s.json"}, "--stats-json ds/manifests/s.json"},
		{"export into another dataset", []string{"export", "--data", other, "-f", "csv", "-o", "ds/policy.json"}, "ds/policy.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.path) || !strings.Contains(stderr, "dataset's own") {
				t.Fatalf("exit %d, stderr %q; want 2, naming %s as the dataset's own", code, stderr, tt.path)
			}
			if after, err := os.ReadFile(current); err != nil || string(after) != string(before) {
				t.Fatalf("CURRENT now %q, %v; was %q", after, err, before)
			}
		})
	}
	if _, stderr, code := runMain(t, "capture", "--data", data, "-o", "obs.parquet", "--dht-state", "st", "--stats-json", "st/x.json", "--duration", "1s"); code != 2 || !strings.Contains(stderr, "--dht-state") {
		t.Fatalf("capture report in --dht-state: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := runMain(t, "status", "--data", data)
	if code != 0 || !strings.Contains(stdout, "(snapshot 1 by dedup") {
		t.Fatalf("status after the refused runs: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, out := range []string{"ds/export/hashes.csv", "ds/notes.csv"} {
		if _, stderr, code := runMain(t, "export", "--data", data, "-f", "csv", "-o", out); code != 0 {
			t.Fatalf("export -o %s: exit %d: %s", out, code, stderr)
		}
	}
}

// TestOutputIntoDatasetNamesPathsAlike: the refusal names the dataset and
// the folder it suggests spelt alike, as --data was given: "(in ./ds) ...
// under ./ds/export" (it said "(in ./ds) ... under ds/export"). A dataset
// found around the path (fetch has no --data) is named in full, both times.
func TestOutputIntoDatasetNamesPathsAlike(t *testing.T) {
	dir, data := seedDataset(t)
	t.Chdir(dir)
	data, err := filepath.EvalSymlinks(data) // as the dataset found around a path is named
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"dot slash", []string{"export", "--data", "./ds", "-f", "csv", "-o", "./ds/state/x.csv"},
			"infohash: export: -o ./ds/state/x.csv: that is the dataset's own state/x.csv (in ./ds); write elsewhere, e.g. under ./ds/export\n"},
		{"trailing slash", []string{"export", "--data", "./ds/", "-f", "csv", "-o", "ds/CURRENT"},
			"infohash: export: -o ds/CURRENT: that is the dataset's own CURRENT (in ./ds/); write elsewhere, e.g. under ./ds/export\n"},
		{"bare", []string{"export", "--data", "ds", "-f", "csv", "-o", "./ds/state/x.csv"},
			"infohash: export: -o ./ds/state/x.csv: that is the dataset's own state/x.csv (in ds); write elsewhere, e.g. under ds/export\n"},
		{"found around the path", []string{"fetch", "--no-dht", "h.txt", "-o", "./ds/CURRENT"},
			"infohash: fetch: -o ./ds/CURRENT: that is the dataset's own CURRENT (in " + data + "); write elsewhere, e.g. under " + data + "/export\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code != 2 || stderr != tt.want {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}
