package app

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// doneRecord returns the JSON log record with message msg from stderr.
func doneRecord(t *testing.T, stderr, msg string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			return rec
		}
	}
	t.Fatalf("no %q record in stderr:\n%s", msg, stderr)
	return nil
}

// checkNumbers fails if the record writes a count or a time as a JSON
// string: "seconds" must be a number, as in --stats-json, and so must any
// value that reads as one (but for the keys exempt, which name things).
func checkNumbers(t *testing.T, rec map[string]any, exempt ...string) {
	t.Helper()
	if _, ok := rec["seconds"].(float64); !ok {
		t.Errorf("%s: seconds is %#v, want a JSON number", rec["msg"], rec["seconds"])
	}
	for k, v := range rec {
		s, ok := v.(string)
		if !ok || k == "msg" || k == "level" || k == "time" || slices.Contains(exempt, k) {
			continue
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			t.Errorf("%s: %s is the string %q, want a JSON number", rec["msg"], k, s)
		}
	}
}

// TestJSONLogNumbers: with --log-format json each stage's final record
// writes its numbers (the run's seconds above all) as JSON numbers.
func TestJSONLogNumbers(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	hs := seedHashes(t, data, 3, 7)
	h, _, _, err := schema.ParseHex(hs[0])
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	rs := []schema.Result{{InfoHash: h, HashType: 1, AttemptedAt: at.UnixMilli(),
		Outcome: schema.OutcomeNoPeers, PeerFailures: []schema.PeerFailure{}}}
	other := filepath.Join(dir, "other")
	seedHashes(t, other, 2, 8)
	for _, tt := range []struct {
		name, msg string
		stdin     []byte
		args      []string
	}{
		{"dedup", "dedup: done", []byte(hs[1] + "\n"), []string{"dedup", "--data", data, "-"}},
		{"plan-retries", "plan-retries: done", nil, []string{"plan-retries", "--data", data, "--far-now", "--now", at.Format(time.RFC3339), "-o", filepath.Join(dir, "jobs.parquet")}},
		{"merge", "merge: done", resultsArrow(t, rs), []string{"merge", "--data", data, "--far-now", "--now", at.Add(time.Minute).Format(time.RFC3339), "-"}},
		{"merge --from", "merge --from: done", nil, []string{"merge", "--data", data, "--from", other}},
		{"export", "export: done", nil, []string{"export", "--data", data, "--format", "csv", "-o", filepath.Join(dir, "state.csv")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ih(t, tt.stdin, append(tt.args, "--log-format", "json")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			checkNumbers(t, doneRecord(t, r.stderr, tt.msg), "lease_id", "from", "output")
		})
	}
}

// TestDedupDoneLine: dedup's final log line is "dedup: done", as
// capture's and fetch's are "capture: done" and "fetch: done", in the
// text log format and the JSON one.
func TestDedupDoneLine(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	hs := seedHashes(t, data, 3, 7)
	for _, tt := range []struct {
		format, want string
	}{
		{"text", ` level=INFO msg="dedup: done" inputs=1 `},
		{"json", `"level":"INFO","msg":"dedup: done","inputs":1,`},
	} {
		t.Run(tt.format, func(t *testing.T) {
			r := ih(t, []byte(hs[1]+"\n"), "dedup", "--data", data, "--log-format", tt.format, "-")
			if r.code != 0 || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, "dedup done") {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 0 and a line with %s", r.code, r.stderr, tt.want)
			}
		})
	}
}
