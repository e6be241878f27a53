package app

import (
	"encoding/base32"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// blocklistOf writes DIR/blocklist for hashes (hex) in the line forms of
// dedup's hash lists: a magnet URI with a hex btih and trackers, one with
// a base32 btih and a comment after it, a JSON line of export --format
// jsonl, and hex, among a comment and a blank line.
func blocklistOf(t *testing.T, data string, hashes []string) string {
	t.Helper()
	b32 := func(h string) string {
		raw, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		return base32.StdEncoding.EncodeToString(raw)
	}
	list := "# takedowns\n\n" +
		"magnet:?xt=urn:btih:" + strings.ToUpper(hashes[0]) + "&dn=x&tr=udp%3A%2F%2Ft.invalid%3A80\n" +
		"magnet:?xt=urn:btih:" + b32(hashes[1]) + "  # reported\n" +
		`{"info_hash":"` + hashes[2] + `","name":"C# #2"}` + "\n" +
		hashes[3] + "\n"
	path := filepath.Join(data, "blocklist")
	if err := os.WriteFile(path, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBlocklistHashListLines: DIR/blocklist takes the lines of dedup's
// hash lists (magnet URIs, JSON lines, hex). plan-retries and export
// leave its hashes out (a magnet line made both exit 2), and a line that
// is not a hash is still bad input naming DIR/blocklist:LINE.
func TestBlocklistHashListLines(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	hashes := strings.Fields(hexLines("blocklist", 6))
	list := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(list, []byte(hexLines("blocklist", 6)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMain(t, "dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", list); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	path := blocklistOf(t, data, hashes)
	now := []string{"--far-now", "--now", "2026-03-02T00:00:00Z"}
	jobsFile := filepath.Join(dir, "jobs.parquet")
	stdout, stderr, code := runMain(t, "export", "--data", data, "--format", "magnet", "-o", "-")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	for i, h := range hashes {
		if got, want := strings.Contains(stdout, h), i >= 4; got != want {
			t.Errorf("export: hash %d (%s) exported %v, want %v:\n%s", i, h, got, want, stdout)
		}
	}
	if _, stderr, code := runMain(t, append([]string{"plan-retries", "--data", data, "--limit", "10", "-o", jobsFile}, now...)...); code != 0 {
		t.Fatalf("plan-retries: exit %d: %s", code, stderr)
	}
	jobs, err := dataset.ReadFile[schema.Job](jobsFile)
	if err != nil {
		t.Fatal(err)
	}
	var planned []string
	for _, j := range jobs {
		planned = append(planned, hex.EncodeToString(j.InfoHash[:]))
	}
	slices.Sort(planned)
	want := slices.Sorted(slices.Values(hashes[4:]))
	if !slices.Equal(planned, want) {
		t.Errorf("plan-retries planned %v, want %v", planned, want)
	}

	// A line still bad: one line naming the file and line, exit 2.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("magnet:?dn=no+topic\n")
	f.Close()
	for _, args := range [][]string{
		append([]string{"plan-retries", "--data", data, "--limit", "10", "--replace", "-o", jobsFile}, now...),
		{"export", "--data", data, "--format", "csv", "-o", "-"},
	} {
		_, stderr, code := runMain(t, args...)
		want := "infohash: " + args[0] + ": blocklist: " + path + ":7: magnet URI without a urn:btih or urn:btmh xt parameter\n"
		if code != 2 || stderr != want {
			t.Errorf("%s with a bad line: exit %d, stderr %q; want 2 and %q", args[0], code, stderr, want)
		}
	}
}
