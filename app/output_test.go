package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/internal/progress"
)

// ihFiles runs the binary with extra open files as fds 3, 4, ...
func ihFiles(t *testing.T, extra []*os.File, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, infohashBinary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = &out, &errb, extra
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliRun{out.Bytes(), errb.String(), code}
}

// TestOutputsRespectWhatIsThere: -o and --stats-json write into a FIFO,
// through a symbolic link, and through /dev/fd/N in place instead of
// putting a new regular file there; a device's write error fails the run.
func TestOutputsRespectWhatIsThere(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	seedHashes(t, data, 20, 3)
	want := stateCSV(t, data)
	dir := t.TempDir()
	export := func(extra []*os.File, out string, more ...string) cliRun {
		return ihFiles(t, extra, append([]string{"export", "--data", data, "--table", "state", "-f", "csv", "-o", out}, more...)...)
	}

	t.Run("fifo", func(t *testing.T) {
		ff := filepath.Join(dir, "ff")
		if err := unix.Mkfifo(ff, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(ff)
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- string(b)
		}()
		if r := export(nil, ff); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		select {
		case s := <-got:
			if s != want {
				t.Fatalf("the FIFO's reader got %d bytes, want the %d of the export", len(s), len(want))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the export never opened the FIFO")
		}
		if fi, err := os.Lstat(ff); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("the FIFO was replaced: %v, %v", fi.Mode(), err)
		}
	})

	t.Run("symlink", func(t *testing.T) {
		target, link := filepath.Join(dir, "target.csv"), filepath.Join(dir, "link.csv")
		if err := os.Symlink("target.csv", link); err != nil {
			t.Fatal(err)
		}
		if r := export(nil, link); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if to, err := os.Readlink(link); err != nil || to != "target.csv" {
			t.Fatalf("the link became %q, %v", to, err)
		}
		b, err := os.ReadFile(target)
		if err != nil || string(b) != want {
			t.Fatalf("the target holds %d bytes, %v", len(b), err)
		}
		um := unix.Umask(0)
		unix.Umask(um)
		if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o666&^fs.FileMode(um) {
			t.Fatalf("mode %v under umask %03o", fi.Mode().Perm(), um)
		}
	})

	t.Run("device write error", func(t *testing.T) {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skipf("no /dev/full: %v", err)
		}
		defer full.Close()
		r := export([]*os.File{full}, "/dev/fd/3")
		if r.code != 1 || !strings.Contains(r.stderr, "no space left on device") {
			t.Fatalf("exit %d, want 1 with ENOSPC: %s", r.code, r.stderr)
		}
	})

	t.Run("stats through /dev/fd", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		r := export([]*os.File{pw}, filepath.Join(dir, "s.csv"), "--stats-json", "/dev/fd/3", "--metrics-file", "/dev/fd/3")
		pw.Close()
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		b, _ := io.ReadAll(pr)
		if !strings.Contains(string(b), "infohash_export_") || !strings.Contains(string(b), `"rows": 20`) {
			t.Fatalf("the pipe got %q", b)
		}
	})
}

// TestReportPathsCheckedBeforeWork: a --stats-json or --metrics-file that
// cannot be written, or a second claim on stdout, is a usage error before
// the run does anything (the dataset is not even created).
func TestReportPathsCheckedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(list, []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope", "s.json")
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"stats-json in a missing directory", []string{"dedup", "--stats-json", missing, list}, "--stats-json: " + missing},
		{"metrics-file in a missing directory", []string{"dedup", "--metrics-file", missing, list}, "--metrics-file: " + missing},
		{"stats-json names a directory", []string{"dedup", "--stats-json", dir, list}, "is a directory"},
		{"both reports on stdout", []string{"dedup", "--stats-json", "-", "--metrics-file", "-", list}, "only one of them"},
		{"export's data and stats on stdout", []string{"export", "-f", "csv", "--stats-json", "-"}, "--stats-json -: the command's data goes to stdout (no -o FILE given)"},
		{"export's data (-o -) and stats on stdout", []string{"export", "-f", "csv", "-o", "-", "--stats-json", "-"}, "--stats-json -: the command's data goes to stdout (-o -)"},
		{"plan-retries' data and metrics on stdout", []string{"plan-retries", "-o", "-", "--metrics-file", "-"}, "--metrics-file -:"},
		{"fetch's data and stats on stdout", []string{"fetch", "-o", "-", "--stats-json", "-", list}, "--stats-json -:"},
		{"plan-retries -o in a missing directory", []string{"plan-retries", "-o", missing}, "plan-retries: -o: " + missing},
		{"export -o a directory", []string{"export", "-o", dir}, "export: -o:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			args := append([]string{"infohash"}, c.args...)
			if c.args[0] != "fetch" {
				args = append(args, "--data", data)
			}
			var stdout, stderr bytes.Buffer
			if code := Main(args, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.msg) {
				t.Fatalf("exit %d, want 2 saying %q: %s", code, c.msg, stderr.String())
			}
			if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the run did work before refusing: %v", err)
			}
			if stdout.Len() > 0 {
				t.Fatalf("stdout got %q", stdout.String())
			}
		})
	}
}

// TestBadOutputLeasesNothing: plan-retries -o into a missing directory
// commits no leases (before, it leased the hashes for 2 h and then
// failed), and --stats-json - puts the counters on stdout when the data
// goes to a file.
func TestBadOutputLeasesNothing(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	seedHashes(t, data, 10, 5)
	dir := t.TempDir()
	if r := ih(t, nil, "plan-retries", "--data", data, "-o", filepath.Join(dir, "nope", "jobs.parquet")); r.code != 2 {
		t.Fatalf("exit %d, want 2: %s", r.code, r.stderr)
	}
	r := ih(t, nil, "plan-retries", "--data", data, "-o", filepath.Join(dir, "jobs.parquet"), "--stats-json", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !bytes.Contains(r.stdout, []byte(`"planned": 10`)) {
		t.Fatalf("stdout %q, want the counters with all 10 hashes planned", r.stdout)
	}
}

// openPTY opens a pseudo-terminal pair without a library: the master from
// /dev/ptmx, unlocked, and its slave /dev/pts/N.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open the slave: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

func TestIsTerminal(t *testing.T) {
	_, tty := openPTY(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, c := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{"pty", tty, true},
		{"pipe", w, false},
		{"/dev/null", null, false},
		{"buffer", &bytes.Buffer{}, false},
	} {
		if got := isTerminal(c.w); got != c.want {
			t.Errorf("%s: isTerminal %v, want %v", c.name, got, c.want)
		}
	}
}

// TestBinaryToTerminalRefused: with stdout a terminal, Arrow and Parquet
// on stdout are a usage error before anything is committed (plan-retries
// leases nothing); text formats and files are fine.
func TestBinaryToTerminalRefused(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	seedHashes(t, data, 10, 7)
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, nil)
	defer func(was func(io.Writer) bool) { isTerminal = was }(isTerminal)
	isTerminal = func(io.Writer) bool { return true }
	for _, c := range []struct {
		name string
		args []string
		msg  string // "" when the run must succeed
	}{
		{"plan-retries", []string{"plan-retries", "--data", data, "-o", "-"}, "plan-retries: refusing to write Arrow to a terminal; use -o FILE or pipe it"},
		// export's default (no -o, no --format) is Parquet on stdout:
		// the line names the text formats that a terminal shows.
		{"export parquet", []string{"export", "--data", data},
			"export: refusing to write Parquet to a terminal; use -o FILE or pipe it, or give --format csv, jsonl or magnet to read it here"},
		{"export arrow", []string{"export", "--data", data, "-f", "arrow", "-o", "-"}, "export: refusing to write Arrow to a terminal"},
		{"capture", []string{"capture", "-o", "-", "--dht-listen", "127.0.0.1:0", "--bootstrap", "127.0.0.1:1"}, "capture: refusing to write Arrow"},
		{"fetch", []string{"fetch", "-o", "-", "--no-dht", jobs}, "fetch: refusing to write Arrow"},
		{"export csv", []string{"export", "--data", data, "-f", "csv"}, ""},
		{"export magnet", []string{"export", "--data", data, "-f", "magnet"}, ""},
		{"export parquet to a file", []string{"export", "--data", data, "-o", filepath.Join(dir, "x.parquet")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(append([]string{"infohash"}, c.args...), nil, &stdout, &stderr)
			if c.msg == "" {
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr.String())
				}
				return
			}
			if code != 2 || !strings.Contains(stderr.String(), c.msg) || stdout.Len() > 0 {
				t.Fatalf("exit %d, %d bytes out; want 2 saying %q: %s", code, stdout.Len(), c.msg, stderr.String())
			}
		})
	}
	// Nothing was leased: a planner writing to a file gets every hash.
	var stdout, stderr bytes.Buffer
	planned := filepath.Join(dir, "planned.parquet") // not jobs, fetch's input above: an existing -o FILE is refused
	if code := Main([]string{"infohash", "plan-retries", "--data", data, "-o", planned, "--stats-json", "-"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"planned": 10`) {
		t.Fatalf("stats %s, want all 10 hashes planned", stdout.String())
	}
}

// TestNoProgressBarAmongRows: export -o - to a terminal writes its rows
// there, so it draws no progress bar on the (same) terminal's stderr: the
// bar came out in front of the CSV header.
func TestNoProgressBarAmongRows(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	seedHashes(t, data, 10, 7)
	master, tty := openPTY(t)
	defer func(was func(io.Writer) bool) { isTerminal = was }(isTerminal)
	isTerminal = func(io.Writer) bool { return true }
	// A bar drawn at once: after progress.Delay (1 s), an export this short
	// draws none, and the test passed with the bar left on.
	defer func(was time.Duration) { progress.Delay = was }(progress.Delay)
	progress.Delay = 0
	var stdout bytes.Buffer
	if code := Main([]string{"infohash", "export", "--data", data, "-f", "csv", "-o", "-"}, nil, &stdout, tty); code != 0 {
		t.Fatalf("exit %d", code)
	}
	tty.Close()
	seen, _ := io.ReadAll(master) // EIO once the slave is closed and drained
	if bytes.Contains(seen, []byte("export: partitions")) {
		t.Fatalf("a progress bar among the rows: %q", seen)
	}
	if !strings.HasPrefix(stdout.String(), "info_hash,") {
		t.Fatalf("stdout %.60q, want the CSV header first", stdout.String())
	}
}
