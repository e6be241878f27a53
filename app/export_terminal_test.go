package app

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/progress"
)

// TestNamedTerminalOutput: an -o that names a terminal (a pseudo-terminal's
// /dev/pts/N; -o /dev/stdout or /dev/tty from a terminal are the same)
// is treated as -o - on a terminal. Parquet and Arrow are refused (exit 2,
// nothing on the terminal): export wrote 1.2 MB of Parquet there, and
// capture, fetch and plan-retries still wrote theirs after export's
// refusal. A text export's rows go there without a progress bar among
// them: the bar on the same terminal's stderr cut into the CSV lines.
func TestNamedTerminalOutput(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	seedHashes(t, data, 10, 7)
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, nil)
	// A bar drawn at once: after progress.Delay, none would be on so short a run.
	defer func(was time.Duration) { progress.Delay = was }(progress.Delay)
	progress.Delay = 0
	tests := []struct {
		name string
		args []string // -o TTY is appended
		msg  string   // "" when the run must succeed
	}{
		{"export parquet", []string{"export", "--data", data},
			"export: refusing to write Parquet to a terminal (-o TTY); use -o FILE or pipe it, or give --format csv, jsonl or magnet to read it here"},
		{"export arrow", []string{"export", "--data", data, "-f", "arrow"}, "export: refusing to write Arrow to a terminal (-o TTY)"},
		{"export csv", []string{"export", "--data", data, "-f", "csv"}, ""},
		// Before any lease: the check after the table sees all 10 hashes planned.
		{"plan-retries", []string{"plan-retries", "--data", data},
			"plan-retries: refusing to write Parquet to a terminal (-o TTY); use -o FILE or pipe it\n"},
		{"capture", []string{"capture", "--dht-listen", "127.0.0.1:0", "--bootstrap", "127.0.0.1:1", "--duration", "1s"},
			"capture: refusing to write Parquet to a terminal (-o TTY); use -o FILE or pipe it\n"},
		{"fetch", []string{"fetch", "--no-dht", jobs}, "fetch: refusing to write Parquet to a terminal (-o TTY); use -o FILE or pipe it\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			master, tty := openPTY(t) // output_test.go's
			seen := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(master) // EIO once every descriptor of the slave is closed
				seen <- b
			}()
			var stdout bytes.Buffer
			// stderr is the same terminal, as in a shell.
			code := Main(append([]string{"infohash"}, append(tc.args, "-o", tty.Name())...), nil, &stdout, tty)
			tty.Close()
			var out []byte
			select {
			case out = <-seen:
			case <-time.After(time.Minute): // a descriptor of the terminal left open
				master.Close()
				t.Fatalf("the terminal was still open a minute after the run (exit %d)", code)
			}
			if tc.msg == "" {
				if code != 0 {
					t.Fatalf("exit %d; the terminal shows %q", code, out)
				}
				if bytes.Contains(out, []byte("export: partitions")) {
					t.Fatalf("a progress bar among the rows: %q", out)
				}
				// The header, the 10 rows, then the log's "export: done".
				lines := strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
				if len(lines) < 12 || !strings.HasPrefix(lines[0], "info_hash,") || !strings.Contains(lines[11], "export: done") {
					t.Fatalf("the terminal shows %q, want the CSV header, 10 rows and the log line", out)
				}
				for _, l := range lines[1:11] {
					if len(l) < 41 || l[40] != ',' || strings.Trim(l[:40], "0123456789abcdef") != "" {
						t.Fatalf("row %q is not a hash's: the terminal shows %q", l, out)
					}
				}
				return
			}
			want := "infohash: " + strings.ReplaceAll(tc.msg, "TTY", tty.Name())
			out = bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n"))
			if code != 2 || !bytes.HasPrefix(out, []byte(want)) || bytes.Count(out, []byte("\n")) != 1 || stdout.Len() > 0 {
				t.Fatalf("exit %d, the terminal shows %.300q; want exit 2 and only %q", code, out, want)
			}
		})
	}
	// plan-retries was refused before it leased: a plan to a file gets every hash.
	var stdout, stderr bytes.Buffer
	planned := filepath.Join(dir, "planned.parquet")
	if code := Main([]string{"infohash", "plan-retries", "--data", data, "-o", planned, "--stats-json", "-"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"planned": 10`) {
		t.Fatalf("stats %s, want all 10 hashes planned", stdout.String())
	}
}
