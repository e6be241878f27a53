package app

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestPlanRetriesBrokenPipeSaysWhatStaysLeased: "plan-retries -o - |
// fetch --bogus - -o -" ends with the reader gone, after the leases were
// committed. Exit 141 is otherwise silent ("| head" has what it wanted),
// but here the reader saw none of the jobs it leased: one line says how
// many stay leased until when, in the logs' format.
func TestPlanRetriesBrokenPipeSaysWhatStaysLeased(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra []string
		want  []string
	}{
		{"text", nil, []string{"level=WARN", "2 jobs stay leased until 2026-03-01T02:00:00Z", "jobs=2"}},
		{"json", []string{"--log-format", "json"}, []string{`"level":"WARN"`, "2 jobs stay leased until 2026-03-01T02:00:00Z", `"jobs":2`, `"lease_until":"2026-03-01T02:00:00Z"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, data := seedDataset(t)
			var stderr bytes.Buffer
			args := append([]string{"infohash", "plan-retries", "--data", data, "--now", "2026-03-01T00:00:00Z", "--limit", "5000", "-o", "-"}, tt.extra...)
			code := run(context.Background(), args, strings.NewReader(""), readerGone(t), &stderr)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			var line string
			for _, l := range lines {
				if strings.Contains(l, "stay leased") {
					if line != "" {
						t.Fatalf("more than one line about the leases:\n%s", stderr.String())
					}
					line = l
				}
			}
			if code != 141 {
				t.Fatalf("exit %d, want 141: %s", code, stderr.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(line, want) {
					t.Errorf("line %q lacks %q (stderr:\n%s)", line, want, stderr.String())
				}
			}
		})
	}
	// With nothing planned, nothing stays leased: 141 stays quiet.
	_, data := seedDataset(t)
	if _, stderr, code := runMain(t, "plan-retries", "--data", data, "--now", "2026-03-01T00:00:00Z", "-o", os.DevNull); code != 0 {
		t.Fatalf("plan-retries: exit %d: %s", code, stderr)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"infohash", "plan-retries", "--data", data, "--now", "2026-03-01T00:01:00Z", "-o", "-"}, strings.NewReader(""), w, &stderr)
	if code == 141 && strings.Contains(stderr.String(), "stay leased") {
		t.Fatalf("nothing leased, yet: %s", stderr.String())
	}
}
