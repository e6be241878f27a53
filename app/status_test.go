package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/infohash/infohash/pipeline/status"
)

// TestStatusHelpNamesWaves: status --help names every retry wave as
// --format json and the metrics file spell it, and as the text says it.
func TestStatusHelpNamesWaves(t *testing.T) {
	help := strings.Join(strings.Fields(helpOf(t, "status")), " ")
	for _, wv := range status.Waves {
		if !regexp.MustCompile(`(^|\W)` + wv.Name + `(\W|$)`).MatchString(help) {
			t.Errorf("status --help does not name the wave %s", wv.Name)
		}
		if wv.Label != wv.Name && !strings.Contains(help, `"`+wv.Label+`"`) {
			t.Errorf("status --help does not say what the text calls %s (%q)", wv.Name, wv.Label)
		}
	}
}

// TestStatusCLI: --metrics-file writes the status gauges (with the lease
// plan-retries just took), extra arguments are refused, and a command
// line with no command is a usage error.
func TestStatusCLI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	hashes := filepath.Join(dir, "h.txt")
	list := "0123456789abcdef0123456789abcdef01234567\nfedcba9876543210fedcba9876543210fedcba98\n"
	if err := os.WriteFile(hashes, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", hashes},
		{"plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "--limit", "1", "-o", filepath.Join(dir, "jobs.parquet")},
	} {
		if _, stderr, code := runMain(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, stderr)
		}
	}
	prom := filepath.Join(dir, "status.prom")
	stdout, stderr, code := runMain(t, "status", "--data", data, "--far-now", "--now", "2026-03-01T00:10:00Z", "--metrics-file", prom)
	if code != 0 || !strings.Contains(stdout, "(1 leased to fetch jobs") {
		t.Fatalf("status: exit %d: %s%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`infohash_status_hashes{metadata_status="new",tier="hot"} 2` + "\n",
		"infohash_status_leases_live 1\n",
		`infohash_status_overdue{tier="hot",kind="new"} 1` + "\n",
		`infohash_status_overdue{tier="hot",kind="retry"} 0` + "\n",
		`infohash_status_table_rows{table="state"} 2` + "\n",
		"infohash_status_snapshot 2\n",
		"infohash_status_last_input_timestamp_seconds ",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q:\n%s", prom, want, b)
		}
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"status with an argument", []string{"status", "--data", data, "extra"}, `status: unexpected argument "extra"`},
		{"no command", nil, "no command given"},
		{"policy has no metrics", []string{"policy", "show", "--data", data, "--metrics-file", prom}, "policy show: unknown flag --metrics-file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d stderr %q, want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

// TestStatusHelpSaysNoState: status --help says what the DuckDB and
// frozen lines and their JSON globs are while DIR holds no state yet
// (status.NoState's "none", null), not only the frozen line's: the
// DuckDB line printed a glob that matched no file.
func TestStatusHelpSaysNoState(t *testing.T) {
	help := strings.Join(strings.Fields(helpOf(t, "status")), " ")
	for _, want := range []string{`The "DuckDB" line reads the current state files`, `both say "none" and what writes it`,
		"state_glob and frozen_state_glob are null in --format json"} {
		if !strings.Contains(help, want) {
			t.Errorf("status --help does not say %q", want)
		}
	}
}
