package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetricsRecordAFailedStatsJSON: a --stats-json that cannot be
// written (a full disk: /dev/full) ends the run with exit 1, and the
// --metrics-file written with it says so: exit_status 1, and the last
// success time of the file it replaces kept. The metrics used to be
// written first, saying exit_status 0 and moving last_success for a run
// that then exited 1.
func TestMetricsRecordAFailedStatsJSON(t *testing.T) {
	type reportCase struct {
		name  string
		args  func(t *testing.T, data, out string) []string
		stdin func(t *testing.T) []byte
	}
	cases := []reportCase{
		{name: "fetch", args: func(t *testing.T, data, out string) []string {
			hashes := filepath.Join(out, "h.txt")
			if err := os.WriteFile(hashes, []byte(committedHash+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"fetch", "--no-dht", "-o", filepath.Join(out, "r.parquet"), hashes}
		}},
		{name: "capture", args: func(t *testing.T, data, out string) []string {
			return []string{"capture", "--data", filepath.Join(out, "capture"), "--bootstrap", "", "--dht-listen", "127.0.0.1:0",
				"--duration", "1s", "-o", filepath.Join(out, "obs.parquet")}
		}},
		{name: "export", args: func(t *testing.T, data, out string) []string {
			return []string{"export", "--data", data, "--format", "csv", "-o", filepath.Join(out, "state.csv")}
		}},
	}
	for _, cc := range committedCases {
		cases = append(cases, reportCase{name: cc.name, stdin: cc.stdin,
			args: func(t *testing.T, data, out string) []string { return cc.args(data, out) }})
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			data, out := newCommittedData(t)
			var stdin []byte
			if tt.stdin != nil {
				stdin = tt.stdin(t)
			}
			prom := filepath.Join(out, "run.prom")
			metric := "infohash_" + strings.ReplaceAll(tt.name, "-", "_") + "_"
			old := metric + "last_success_timestamp_seconds 1600000000\n"
			if err := os.WriteFile(prom, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(tt.args(t, data, out), "--stats-json", "/dev/full", "--metrics-file", prom)
			if _, stderr, code := runMainIn(t, stdin, args...); code != 1 || !strings.Contains(stderr, "--stats-json: write /dev/full") {
				t.Fatalf("exit %d, want 1 saying --stats-json could not be written:\n%s", code, stderr)
			}
			b, err := os.ReadFile(prom)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "\n"+metric+"exit_status 1\n") {
				t.Errorf("--metrics-file does not say exit_status 1:\n%s", b)
			}
			if last := sample(t, string(b), metric+"last_success_timestamp_seconds"); last != 1600000000 {
				t.Errorf("last_success_timestamp_seconds moved to %v for a run that exited 1:\n%s", last, b)
			}
		})
	}
}
