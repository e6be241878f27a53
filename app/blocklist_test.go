package app

import (
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
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

// TestStatusBadBlocklistWritesGauges: status with a blocklist it cannot
// read prints its report and writes its gauges (blocklist_unreadable 1,
// every count but the retry waves; the last success's time kept), then
// fails with one line naming DIR/blocklist:LINE (exit 1). It used to
// exit 1 before writing either, and monitoring went blind.
func TestStatusBadBlocklistWritesGauges(t *testing.T) {
	dir, data := seedDataset(t)
	prom := filepath.Join(dir, "status.prom")
	if _, stderr, code := runMain(t, "status", "--data", data, "--metrics-file", prom); code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	read := func() string {
		b, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	lastSuccess := func(s string) string {
		_, v, _ := strings.Cut(s, "\ninfohash_status_last_success_timestamp_seconds ")
		return v
	}
	before := lastSuccess(read())
	path := filepath.Join(data, "blocklist")
	if err := os.WriteFile(path, []byte("magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567\nzz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr := "infohash: status: blocklist: " + path + `:2: infohash "zz": want 40 or 64 hex characters, got 2` + "\n"
	for _, format := range []string{"text", "json"} {
		stdout, stderr, code := runMain(t, "status", "--data", data, "--format", format, "--metrics-file", prom)
		if code != 1 || stderr != wantErr {
			t.Fatalf("status --format %s: exit %d, stderr %q; want 1 and %q", format, code, stderr, wantErr)
		}
		if format == "json" {
			var r struct {
				Hashes         int64            `json:"hashes"`
				RetryWaves     map[string]int64 `json:"retry_waves"`
				BlocklistError *string          `json:"blocklist_error"`
			}
			if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Hashes != 2 || r.RetryWaves != nil || r.BlocklistError == nil {
				t.Fatalf("status --format json: %v: %s", err, stdout)
			}
		} else if !strings.Contains(stdout, "hashes") || !strings.Contains(stdout, "unreadable, retry waves not counted: blocklist: "+path+":2:") {
			t.Fatalf("status report:\n%s", stdout)
		}
		got := read()
		for _, want := range []string{"infohash_status_blocklist_unreadable 1\n", `infohash_status_hashes{metadata_status="new",tier="hot"} 2` + "\n",
			`infohash_status_table_rows{table="state"} 2` + "\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %q:\n%s", prom, want, got)
			}
		}
		if after := lastSuccess(got); after != before || strings.Contains(got, "infohash_status_overdue") {
			t.Errorf("last success %q (was %q), or overdue counted without the blocklist:\n%s", after, before, got)
		}
	}
}
