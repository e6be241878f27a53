package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestReportReaderGone: the commands whose only output is a report on
// stdout (clock's time, export --describe, status in either format,
// policy show) exit 141 with nothing on stderr when the report's reader
// is gone, as their EXIT STATUS says and "export -o - | head" does; a
// report printed with a bare fmt.Fprint dropped the write's error and
// exited 0.
func TestReportReaderGone(t *testing.T) {
	_, data := seedDataset(t)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"clock", []string{"clock", "--now", "2026-03-01T00:00:00Z"}},
		{"export --describe", []string{"export", "--describe", "all"}},
		{"status", []string{"status", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z"}},
		{"status --format json", []string{"status", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "--format", "json"}},
		{"policy show", []string{"policy", "show", "--data", data}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), append([]string{"infohash"}, tt.args...), strings.NewReader(""), goneAfterCommit{}, &stderr)
			if code != 141 || stderr.Len() != 0 {
				t.Errorf("exit %d, stderr %q; want 141 and nothing", code, stderr.String())
			}
		})
	}
}
