package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedDataset makes a dataset of two hashes with a lease, through the CLI.
func seedDataset(t *testing.T) (dir, data string) {
	t.Helper()
	dir = t.TempDir()
	data = filepath.Join(dir, "ds")
	hashes := filepath.Join(dir, "h.txt")
	list := "0123456789abcdef0123456789abcdef01234567\nfedcba9876543210fedcba9876543210fedcba98\n"
	if err := os.WriteFile(hashes, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMain(t, "dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", hashes); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	return dir, data
}

// TestInterruptedSaysSo runs commands under a context already cancelled,
// as SIGINT leaves it: exit 130 and "interrupted", never "context
// canceled".
func TestInterruptedSaysSo(t *testing.T) {
	dir, data := seedDataset(t)
	out := filepath.Join(dir, "state.csv")
	jobs := filepath.Join(dir, "jobs.parquet")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"export to a file", []string{"export", "--data", data, "--format", "csv", "-o", out}, "infohash: export: interrupted; " + out + " not written\n"},
		{"export to stdout", []string{"export", "--data", data, "--format", "csv", "-o", "-"}, "infohash: export: interrupted; the output on stdout is incomplete\n"},
		{"status", []string{"status", "--data", data}, "infohash: status: interrupted\n"},
		// Before its commit: nothing leased, as the help's 130 row says
		// (the line said only "interrupted").
		{"plan-retries to a file", []string{"plan-retries", "--data", data, "-o", jobs},
			"infohash: plan-retries: interrupted; nothing committed (no hash leased, no jobs written)\n"},
		{"plan-retries dry run", []string{"plan-retries", "--data", data, "--limit", "0"},
			"infohash: plan-retries: interrupted; nothing committed (no hash leased, no jobs written)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, append([]string{"infohash"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != 130 || stderr.String() != tt.want {
				t.Fatalf("exit %d stderr %q, want 130 and %q", code, stderr.String(), tt.want)
			}
		})
	}
	for _, p := range []string{out, jobs} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s written by an interrupted run", p)
		}
	}
}

func TestInterruptedMessage(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"context canceled", "merge: interrupted"},
		{"merge: context canceled", "merge: interrupted"},
		{"plan-retries: context canceled (the jobs stay leased until their lease ends)", "plan-retries: interrupted (the jobs stay leased until their lease ends)"},
	} {
		if got := interruptedMessage(tt.in, []string{"infohash", "merge"}); got != tt.want {
			t.Errorf("interruptedMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestErrorsNameThePathOnce: rowio's errors begin with the file they are
// about; merge and plan-retries wrapped them with the same path again.
func TestErrorsNameThePathOnce(t *testing.T) {
	dir, data := seedDataset(t)
	garbage := filepath.Join(dir, "garbage.parquet")
	if err := os.WriteFile(garbage, []byte("not a results file"), 0o644); err != nil {
		t.Fatal(err)
	}
	obs := filepath.Join(dir, "obs.parquet") // a Parquet file of another schema: jobs
	if _, stderr, code := runMain(t, "plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "-o", obs); code != 0 {
		t.Fatalf("plan-retries: exit %d: %s", code, stderr)
	}
	missing := filepath.Join(dir, "no-such-dir", "jobs.parquet")
	tests := []struct {
		name, path string
		args       []string
		want       string
	}{
		{"merge, wrong schema", obs, []string{"merge", "--data", data, obs}, "not a results file"},
		{"merge, not Arrow nor Parquet", garbage, []string{"merge", "--data", data, garbage}, "neither Parquet nor an Arrow IPC stream"},
		{"plan-retries, output dir missing", missing, []string{"plan-retries", "--data", data, "--far-now", "--now", "2026-03-02T00:00:00Z", "-o", missing}, "no such file or directory"},
		{"dedup, wrong schema", obs, []string{"dedup", "--data", data, obs}, "wrong schema"},
		{"dedup, not a hash list", garbage, []string{"dedup", "--data", data, garbage}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code == 0 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d stderr %q, want an error with %q", code, stderr, tt.want)
			}
			if n := strings.Count(stderr, tt.path); n > 1 {
				t.Fatalf("%s named %d times: %q", tt.path, n, stderr)
			}
		})
	}
}

// TestBadInputNamedOnOneLine: an input whose name holds a newline (or a
// terminal's escape codes) is bad input named on the one line the exit
// status contract promises, escaped as Go writes it (the newline split
// the message over two lines), and nothing is committed.
func TestBadInputNamedOnOneLine(t *testing.T) {
	dir, data := seedDataset(t)
	before, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, content string
		args                []string // the file is appended
		want                string
	}{
		{"dedup, not Parquet", "a\nb.parquet", "not parquet\n", []string{"dedup", "--data", data}, `a\nb.parquet: not a Parquet file`},
		{"dedup, bad hex line", "a\nb.txt", "0123456789abcdef0123456789abcdef01234567\nzzzz\n", []string{"dedup", "--data", data}, `a\nb.txt:2: infohash "zzzz"`},
		{"merge, not results", "c\nd.parquet", "not parquet\n", []string{"merge", "--data", data}, `c\nd.parquet: neither Parquet nor an Arrow IPC stream`},
		{"fetch, bad hex line", "e\r\nf.txt", "zzzz\n", []string{"fetch", "--no-dht", "--peer", "127.0.0.1:1", "-o", filepath.Join(dir, "r.parquet")}, `e\r\nf.txt:1: infohash "zzzz"`},
		{"dedup, escape codes", "\x1b[2Jg.txt", "zzzz\n", []string{"dedup", "--data", data}, `\x1b[2Jg.txt:1: infohash "zzzz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, tt.file)
			if err := os.WriteFile(file, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runMain(t, append(tt.args, file)...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, tt.want)
			}
			if after, err := os.ReadFile(filepath.Join(data, "CURRENT")); err != nil || !bytes.Equal(after, before) {
				t.Fatalf("CURRENT %q (%v), was %q: bad input committed", after, err, before)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain: no change":      "plain: no change",
		"tab\tstays":            "tab\tstays",
		"a\nb\r\x1b[0m\x7f":     `a\nb\r\x1b[0m\x7f`,
		"c1 \u0085, sep \u2028": `c1 \x85, sep \u2028`,
		"not UTF-8 \xff stays":  "not UTF-8 \xff stays",
		"\xff\n\xfe":            "\xff" + `\n` + "\xfe",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// readerGone returns the write end of a pipe whose reader went away before
// the first byte ("| head" already done).
func readerGone(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// TestBrokenPipeIsQuiet: "infohash export -o - | head" ends when head
// does, with the status a shell gives a tool killed by SIGPIPE and no
// "broken pipe" error on stderr.
func TestBrokenPipeIsQuiet(t *testing.T) {
	_, data := seedDataset(t)
	for _, format := range []string{"csv", "jsonl", "parquet"} {
		t.Run(format, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), []string{"infohash", "export", "--data", data, "--format", format, "-o", "-"}, strings.NewReader(""), readerGone(t), &stderr)
			if code != 141 || strings.Contains(stderr.String(), "infohash:") {
				t.Fatalf("exit %d stderr %q, want 141 and no error line", code, stderr.String())
			}
		})
	}
	// With JSON logs, the run's last record says how it ended.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"infohash", "export", "--data", data, "--format", "csv", "--log-format", "json", "-o", "-"}, strings.NewReader(""), w, &stderr)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	if code != 141 || !strings.Contains(last, `"exit":141`) || !strings.Contains(last, "broken pipe") {
		t.Fatalf("exit %d, last record %q; want 141 and a record of it", code, last)
	}
}

// TestMistypedDataCreatesNothing: dedup makes a new dataset in an existing
// folder (and says so), but a --data whose parent folder is missing is a
// usage error with nothing created.
func TestMistypedDataCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(dir, "srv", "ih", "data")
	_, stderr, code := runMain(t, "dedup", "--data", typo, hashes)
	want := "parent folder " + filepath.Join(dir, "srv", "ih") + " does not exist"
	if code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "srv")); !os.IsNotExist(err) {
		t.Fatalf("dedup made folders for a mistyped --data: %v", err)
	}
	_, stderr, code = runMain(t, "dedup", "--data", filepath.Join(dir, "ds"), hashes)
	if code != 0 || !strings.Contains(stderr, "created a new dataset") {
		t.Fatalf("exit %d, stderr %q; want 0 and a note that the dataset is new", code, stderr)
	}
}

// TestMissingDataFolder: every command that needs an existing dataset
// says that a --data (or --from) that does not exist does not exist, in
// one line, and keeps "not an infohash dataset" for a folder without one;
// both say which commands make a dataset (dedup; merge --from), but
// policy's (policy set says to mkdir the folder) and merge --from's for
// its OTHER_DIR: that names a dataset to union in, which making one there
// would not give (it said "infohash dedup --data DIR makes one").
func TestMissingDataFolder(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	const makes = "; infohash dedup --data DIR makes one (so does merge --from); no other command does"
	const missing, notDataset = ": the folder does not exist" + makes, ": not an infohash dataset (no CURRENT file)" + makes
	const fromHint = "; --from names an existing dataset to union into --data: check the path"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"status", []string{"status", "--data", typo}, typo + missing},
		{"export", []string{"export", "--data", typo, "--format", "csv", "-o", "-"}, typo + missing},
		{"plan-retries", []string{"plan-retries", "--data", typo, "-o", filepath.Join(dir, "j.parquet")}, typo + missing},
		{"merge", []string{"merge", "--data", typo}, typo + missing},
		{"merge --from", []string{"merge", "--data", filepath.Join(dir, "new"), "--from", typo}, typo + ": the folder does not exist" + fromHint},
		{"merge --from, empty folder", []string{"merge", "--data", filepath.Join(dir, "new"), "--from", empty},
			empty + ": not an infohash dataset (no CURRENT file)" + fromHint},
		{"policy show", []string{"policy", "show", "--data", typo}, typo + ": the folder does not exist"}, // policy's own line
		{"status, empty folder", []string{"status", "--data", empty}, empty + notDataset},
		{"merge, empty folder", []string{"merge", "--data", empty}, empty + notDataset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(typo); !os.IsNotExist(err) {
		t.Fatalf("a command made the missing --data: %v", err)
	}
}
