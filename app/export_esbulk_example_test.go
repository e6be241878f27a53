package app

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestESBulkExampleRuns: export --help's es-bulk example, run as written
// (bash, awk, curl) into a loopback stand-in for Elasticsearch's _bulk,
// indexes every row, in requests of whole action and document pairs of
// at most 10,000 documents. It piped the whole catalog into one request:
// over Elasticsearch's 100 MB request limit (http.max_content_length)
// from ~180,000 rows (README: 687 MB for 1.25M), which it refuses whole.
// The example then used split --filter, which GNU's split alone has (the
// test skipped elsewhere); awk's print to a command and close() are
// POSIX, and the test runs it with the awk on PATH (busybox's, mawk or
// gawk, BSD's).
func TestESBulkExampleRuns(t *testing.T) {
	for _, tool := range []string{"bash", "awk", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s here: %v", tool, err)
		}
	}
	var example string
	for _, line := range strings.Split(helpOf(t, "export"), "\n") {
		if strings.Contains(line, "es-bulk") && strings.Contains(line, "localhost:9200/_bulk") {
			example = strings.TrimSpace(line)
		}
	}
	if !strings.HasPrefix(example, "infohash export --data ./ih ") {
		t.Fatalf("export --help shows no es-bulk example into localhost:9200/_bulk: %q", example)
	}
	var mu sync.Mutex
	var requests [][]string // each request's lines
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/_bulk" || r.Header.Get("Content-Type") != "application/x-ndjson" {
			http.Error(w, "not a bulk request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		requests = append(requests, strings.Split(strings.TrimSuffix(string(body), "\n"), "\n"))
		mu.Unlock()
		io.WriteString(w, `{"errors":false,"items":[]}`)
	}))
	defer srv.Close()

	data := filepath.Join(t.TempDir(), "ih")
	const rows = 10_001 // two requests
	seedHashes(t, data, rows, 5)
	script := strings.Replace(example, "infohash ", infohashBinary(t)+" ", 1)
	script = strings.Replace(script, "./ih", data, 1)
	script = strings.Replace(script, "localhost:9200", strings.TrimPrefix(srv.URL, "http://"), 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	ids := map[string]bool{}
	for i, lines := range requests {
		if len(lines)%2 != 0 || len(lines) > 2*10_000 {
			t.Fatalf("request %d of %d holds %d lines: want whole pairs, at most 10,000 documents", i+1, len(requests), len(lines))
		}
		for j := 0; j < len(lines); j += 2 {
			var action struct {
				Index struct {
					ID string `json:"_id"`
				} `json:"index"`
			}
			var doc map[string]any
			if json.Unmarshal([]byte(lines[j]), &action) != nil || json.NewDecoder(bufio.NewReader(strings.NewReader(lines[j+1]))).Decode(&doc) != nil ||
				action.Index.ID == "" || doc["info_hash"] != action.Index.ID {
				t.Fatalf("request %d, lines %d-%d are not an action and its document: %.100q %.100q", i+1, j+1, j+2, lines[j], lines[j+1])
			}
			ids[action.Index.ID] = true
		}
	}
	if len(ids) != rows {
		t.Fatalf("%d requests indexed %d documents, want %d", len(requests), len(ids), rows)
	}
}
