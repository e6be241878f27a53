package app

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
)

// TestInterruptAfterMigrationSaysSo: a writer opening a dataset of an
// older format migrates it in a commit of its own before it reads its
// input, and a signal during that open (the context cancelled before
// the run: Open commits the migration all the same) or right after it
// stops the run with that commit kept. Its exit-130 line said "nothing
// committed"; it now says that nothing of the input was, and that DIR
// was migrated, naming the snapshot.
func TestInterruptAfterMigrationSaysSo(t *testing.T) {
	for _, tt := range []struct {
		name string
		// args are the command's, from dir and the dataset data (of
		// the current format still).
		args func(t *testing.T, dir, data string) []string
		// want is what the line says after "interrupted; "; id, what
		// it says after the snapshot (of a copy: cp -a of data).
		want, id string
		copy     bool
	}{
		{"dedup", func(t *testing.T, dir, data string) []string {
			return []string{"dedup", "--data", data, writeFile(t, dir, "h.txt", "0123456789abcdef0123456789abcdef01234599\n")}
		}, "nothing of the input committed; ", "", false},
		{"dedup, a copy", func(t *testing.T, dir, data string) []string {
			return []string{"dedup", "--data", data, writeFile(t, dir, "h.txt", "0123456789abcdef0123456789abcdef01234599\n")}
		}, "nothing of the input committed; ", ", which also gave this copy its own dataset id", true},
		{"merge", func(t *testing.T, dir, data string) []string {
			_, _, stream := noPeersStream(t, data)
			return []string{"merge", "--data", data, writeFile(t, dir, "results.arrows", string(stream))}
		}, "nothing of the input committed; ", "", false},
		{"plan-retries", func(t *testing.T, dir, data string) []string {
			return []string{"plan-retries", "--data", data, "--limit", "1", "-o", filepath.Join(dir, "jobs.parquet")}
		}, "no hash leased, no jobs written; ", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, data := seedDataset(t)
			args := append([]string{"infohash"}, tt.args(t, dir, data)...)
			datasettest.SetFormatVersion(t, data, dataset.FormatVersion-1)
			if tt.copy {
				orig := data
				data = filepath.Join(t.TempDir(), "copy")
				if out, err := exec.Command("cp", "-a", orig, data).CombinedOutput(); err != nil {
					t.Fatalf("cp -a: %v\n%s", err, out)
				}
				args[3] = data // --data DIR
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
			snap, writer := currentWriter(t, data)
			if !strings.HasPrefix(writer, "migrate ") {
				t.Fatalf("the current snapshot is by %q, want the migration's", writer)
			}
			want := fmt.Sprintf("%s: interrupted; %s%s was migrated from format %d to %d on open (snapshot %d%s), and that stays committed",
				args[1], tt.want, data, dataset.FormatVersion-1, dataset.FormatVersion, snap, tt.id)
			if code != 130 || !strings.Contains(stderr.String(), want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant 130 and %q", code, stderr.String(), want)
			}
		})
	}
}

// TestSecondSignalAfterMigrationSaysSo: the same for dedup - and merge -
// stopped by a second signal while they spool stdin, after Open
// migrated DIR: the line said "nothing committed (what stdin had sent
// is kept …)".
func TestSecondSignalAfterMigrationSaysSo(t *testing.T) {
	bin := infohashBinary(t)
	for _, cmd := range []string{"dedup", "merge"} {
		t.Run(cmd, func(t *testing.T) {
			_, data := seedDataset(t)
			datasettest.SetFormatVersion(t, data, dataset.FormatVersion-1)
			inbox := filepath.Join(data, "inbox")
			if cmd == "merge" {
				inbox = filepath.Join(inbox, "merge")
			}
			p, stdin, stderr := startPiped(t, bin, cmd, "--data", data, "-")
			defer stdin.Close()
			// The spool is made once Open has migrated DIR.
			waitFor(t, "the stdin spool", func() bool {
				m, _ := filepath.Glob(filepath.Join(inbox, ".tmp-*"))
				return len(m) > 0
			})
			p.Process.Signal(syscall.SIGINT)
			waitFor(t, "the grace warning", func() bool { return strings.Contains(stderr.String(), "applying what the stream still sends") })
			p.Process.Signal(syscall.SIGINT)
			done := make(chan error, 1)
			go func() { done <- p.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("still running a minute after the second signal; stderr:\n%s", stderr.String())
			}
			snap, writer := currentWriter(t, data)
			if !strings.HasPrefix(writer, "migrate ") {
				t.Fatalf("the current snapshot is by %q, want the migration's", writer)
			}
			want := fmt.Sprintf("%s: interrupted; nothing of the input committed; %s was migrated from format %d to %d on open (snapshot %d), "+
				"and that stays committed (what stdin had sent is kept in %s", cmd, data, dataset.FormatVersion-1, dataset.FormatVersion, snap, inbox)
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), want) {
				t.Fatalf("exit %v, stderr:\n%s\nwant 130 and %q", err, stderr.String(), want)
			}
		})
	}
}
