package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// batchedStream writes rows as an Arrow stream in batches of 10 and
// returns it and where each batch ends in it.
func batchedStream[T any](t *testing.T, rows []T) ([]byte, []int) {
	t.Helper()
	var buf bytes.Buffer
	w := rowio.NewArrowWriter[T]("test", &buf)
	var ends []int
	for lo := 0; lo < len(rows); lo += 10 {
		if err := w.Write(rows[lo:min(lo+10, len(rows))]); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, buf.Len())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), ends
}

// sightingsStream seeds a dataset at data with 30 hashes (from seed) and
// returns them, the runs' clock, and a batched stream (batchedStream) of
// 40 get_peers sightings of them a minute before that clock.
func sightingsStream(t *testing.T, data string, seed uint64) (hs []string, now time.Time, stream []byte, ends []int) {
	t.Helper()
	hs = seedHashes(t, data, 30, seed)
	now = time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	obs := make([]schema.Observation, 40)
	for i := range obs {
		h, _, _, err := schema.ParseHex(hs[i%len(hs)])
		if err != nil {
			t.Fatal(err)
		}
		obs[i] = schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: now.Add(-time.Minute).UnixMilli(),
			Source: schema.SourceGetPeers}
	}
	stream, ends = batchedStream(t, obs)
	return hs, now, stream, ends
}

// TestCutStreamsE2E: the real binary given a stream cut mid-message, as
// a writer killed while writing a batch leaves it. dedup exits 2 with one
// line that says how many rows came whole, where they are kept and the
// command that applies them, which works; merge applies the whole
// batches, reports and writes its stats as a whole run does, and exits 3
// with one line saying how many rows were applied and that the other
// jobs stay leased.
func TestCutStreamsE2E(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	_, now, stream, ends := sightingsStream(t, data, 11)
	nowFlag := "--now=" + now.Format(time.RFC3339)
	r := ih(t, stream[:ends[1]+(ends[2]-ends[1])/2], "dedup", "--data", data, nowFlag, "--far-now", "-")
	if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "infohash: dedup: stdin: ") ||
		!strings.Contains(r.stderr, "the stream was cut mid-message after 20 complete rows, none applied") {
		t.Fatalf("dedup: exit %d, stderr %q; want 2 and one line saying 20 rows came whole", r.code, r.stderr)
	}
	apply := regexp.MustCompile(`"infohash (dedup --data \S+ \S+)"`).FindStringSubmatch(r.stderr)
	if apply == nil {
		t.Fatalf("stderr %q names no command to apply the rows", r.stderr)
	}
	if status := string(mustRun(t, nil, "status", "--data", data, nowFlag, "--far-now")); !strings.Contains(status, "partial input (") ||
		!strings.Contains(status, "rejected input (the cut end of a stream cut mid-message") {
		t.Fatalf("status does not list the partial input and the cut message:\n%s", status)
	}
	stats := filepath.Join(t.TempDir(), "dedup.json")
	mustRun(t, nil, append(strings.Fields(apply[1]), nowFlag, "--far-now", "--stats-json", stats)...)
	if b, _ := os.ReadFile(stats); !bytes.Contains(b, []byte(`"observations_read": 20`)) {
		t.Fatalf("applying the partial input: %s", b)
	}

	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, nowFlag, "--far-now", "--limit", "100", "-o", "-"))
	if len(jobs) != 30 {
		t.Fatalf("planned %d jobs, want 30", len(jobs))
	}
	results, ends := batchedStream(t, fakeFetch(jobs, now.Add(time.Minute)))
	stats = filepath.Join(t.TempDir(), "merge.json")
	r = ih(t, results[:ends[1]+9], "merge", "--data", data, nowFlag, "--far-now", "--stats-json", stats, "-")
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if r.code != 3 || !strings.HasPrefix(last, "infohash: merge: stdin: the stream ") ||
		!strings.Contains(last, "the stream was cut mid-message after 20 complete rows, which were applied") ||
		!strings.Contains(last, "the jobs whose rows did not get through stay leased until their lease_until") {
		t.Fatalf("merge: exit %d, stderr %q; want 3 and a line saying 20 rows were applied", r.code, r.stderr)
	}
	var st map[string]any
	if b, err := os.ReadFile(stats); err != nil || json.Unmarshal(b, &st) != nil || st["results"] != 20.0 {
		t.Fatalf("merge stats: %v (%v)", st, err)
	}
	if !strings.Contains(r.stderr, "merge: done") {
		t.Fatalf("merge did not report what it committed: %q", r.stderr)
	}
}

// TestStreamEndsE2E: the real binary given stdin whose writer was killed
// where no message or line is cut in two. An Arrow stream that ends
// between two batches without its end-of-stream marker: dedup exits 2
// with one line saying so, keeps its batches as a partial input (there
// is no cut message), and the command it names applies them; merge
// applies the results and exits 3 with one line saying why. A hash list
// whose last line, which no newline ends, is not an entry: dedup exits 2
// with one line saying where its whole lines and the cut line are, and
// the command it names applies those lines.
func TestStreamEndsE2E(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	hs, now, stream, ends := sightingsStream(t, data, 12)
	nowFlag := "--now=" + now.Format(time.RFC3339)
	list := strings.Join(hs[:12], "\n") + "\n" + hs[12][:25]
	for _, tt := range []struct {
		name, says string
		in         []byte
		rows       string // observations_read when the partial input is applied
		cutBad     bool   // a *.cut.bad is kept too
	}{
		{"Arrow stream without its end marker", "the stream ended without its end-of-stream marker after 20 complete rows " +
			"(its writer was stopped before closing it), none applied", stream[:ends[1]], `"observations_read": 20`, false},
		{"hash list cut mid-line", "the list ends in a cut line: line 13, which no newline ends, is not an entry",
			[]byte(list), `"observations_read": 12`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ih(t, tt.in, "dedup", "--data", data, nowFlag, "--far-now", "-")
			if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "infohash: dedup: stdin: ") ||
				!strings.Contains(r.stderr, tt.says) {
				t.Fatalf("dedup: exit %d, stderr %q; want 2 and one line saying %q", r.code, r.stderr, tt.says)
			}
			apply := regexp.MustCompile(`"infohash (dedup --data \S+ \S+)"`).FindStringSubmatch(r.stderr)
			if apply == nil {
				t.Fatalf("stderr %q names no command to apply the rows", r.stderr)
			}
			status := string(mustRun(t, nil, "status", "--data", data, nowFlag, "--far-now"))
			if !strings.Contains(status, "partial input (") || strings.Contains(status, "rejected input (") != tt.cutBad {
				t.Fatalf("status does not list the partial input (and the cut line: %v):\n%s", tt.cutBad, status)
			}
			stats := filepath.Join(t.TempDir(), "dedup.json")
			mustRun(t, nil, append(strings.Fields(apply[1]), nowFlag, "--far-now", "--stats-json", stats)...)
			if b, _ := os.ReadFile(stats); !bytes.Contains(b, []byte(tt.rows)) {
				t.Fatalf("applying the partial input: %s", b)
			}
		})
	}

	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, nowFlag, "--far-now", "--limit", "100", "-o", "-"))
	results, ends := batchedStream(t, fakeFetch(jobs, now.Add(time.Minute)))
	r := ih(t, results[:ends[1]], "merge", "--data", data, nowFlag, "--far-now", "-")
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if r.code != 3 || !strings.HasPrefix(last, "infohash: merge: stdin: the stream ") ||
		!strings.Contains(last, "the stream ended without its end-of-stream marker after 20 complete rows, which were applied") ||
		!strings.Contains(last, "the jobs whose rows did not get through stay leased until their lease_until") {
		t.Fatalf("merge: exit %d, stderr %q; want 3 and a line saying 20 rows were applied", r.code, r.stderr)
	}
}
