package app

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReportToFIFOStopsOnSignals: --stats-json (and --metrics-file)
// naming a FIFO that no reader opens blocks the command in open(2) once
// its run is done. SIGTERM and a second SIGTERM end it with exit 130 and
// one line naming the flag, for every command that writes a report; a
// command that committed says so. They used to block for good, past any
// signal.
func TestReportToFIFOStopsOnSignals(t *testing.T) {
	bin := infohashBinary(t)
	hashes := filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(hashes, []byte(hexLines("report", 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	// dataset makes a dataset of the five hashes.
	dataset := func(t *testing.T) string {
		data := filepath.Join(t.TempDir(), "ds")
		mustRun(t, nil, "dedup", "--data", data, hashes)
		return data
	}
	fetchArgs := []string{"--no-dht", "--peer", "127.0.0.1:1", "--connect-timeout", "1s"}
	tests := []struct {
		name  string
		flag  string
		args  func(t *testing.T) []string
		wants string // another line stderr must hold
	}{
		{name: "capture", flag: "--stats-json", args: func(t *testing.T) []string {
			return []string{"capture", "--passive", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "10ms",
				"-o", filepath.Join(t.TempDir(), "obs.parquet")}
		}},
		{name: "dedup", flag: "--stats-json", wants: "dedup: committed snapshot 1; then: dedup --stats-json: interrupted",
			args: func(t *testing.T) []string {
				return []string{"dedup", "--data", filepath.Join(t.TempDir(), "ds"), hashes}
			}},
		{name: "plan-retries", flag: "--stats-json", wants: "plan-retries: committed snapshot 2; then: plan-retries --stats-json: interrupted",
			args: func(t *testing.T) []string {
				return []string{"plan-retries", "--data", dataset(t), "-o", filepath.Join(t.TempDir(), "jobs.parquet")}
			}},
		{name: "fetch", flag: "--stats-json", args: func(t *testing.T) []string {
			return append([]string{"fetch", hashes, "-o", filepath.Join(t.TempDir(), "results.parquet")}, fetchArgs...)
		}},
		{name: "merge", flag: "--stats-json", wants: "merge: committed snapshot 3; then: merge --stats-json: interrupted",
			args: func(t *testing.T) []string {
				data, dir := dataset(t), t.TempDir()
				jobs, results := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
				mustRun(t, nil, "plan-retries", "--data", data, "-o", jobs)
				if r := ih(t, nil, append([]string{"fetch", jobs, "-o", results}, fetchArgs...)...); r.code != 0 && r.code != 3 {
					t.Fatalf("fetch: exit %d\n%s", r.code, r.stderr)
				}
				return []string{"merge", "--data", data, results}
			}},
		{name: "export", flag: "--stats-json", args: func(t *testing.T) []string {
			return []string{"export", "--data", dataset(t), "--format", "csv", "-o", filepath.Join(t.TempDir(), "state.csv")}
		}},
		{name: "export metrics", flag: "--metrics-file", args: func(t *testing.T) []string {
			return []string{"export", "--data", dataset(t), "--format", "csv", "-o", filepath.Join(t.TempDir(), "state.csv")}
		}},
		{name: "status metrics", flag: "--metrics-file", args: func(t *testing.T) []string {
			return []string{"status", "--data", dataset(t)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fifo := mkfifo(t)
			cmd, stderr, exited := startCmd(t, bin, nil, append(tt.args(t), tt.flag, fifo)...)
			waitFor(t, "the command to open the FIFO", func() bool { return openingFIFO(cmd.Process.Pid) })
			cmd.Process.Signal(syscall.SIGTERM)
			waitStopSeen(t, stderr)
			cmd.Process.Signal(syscall.SIGTERM)
			wantExit130(t, exited, stderr, "SIGTERM")
			want := strings.Fields(tt.name)[0] + " " + tt.flag +
				": interrupted; the output could not be delivered: stopped by a second signal while no reader had opened " + fifo
			if n := strings.Count(stderr.String(), "the output could not be delivered"); n != 1 || !strings.Contains(stderr.String(), want) {
				t.Fatalf("stderr does not say once %q:\n%s", want, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wants) {
				t.Fatalf("stderr does not say %q:\n%s", tt.wants, stderr.String())
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Fatalf("the FIFO was replaced: %v", err)
			}
		})
	}
}
