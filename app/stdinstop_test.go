package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestSecondSignalAfterWholeStdin: a dedup - or merge - stopped by a
// second signal after stdin was read to its end and spooled durably (here
// while it waits for the writer lock another process holds) says that the
// next run applies the spool, which it then does; it used to say the next
// run sets it aside as partial-*, which it does only with a spool cut
// short (TestInterruptAppliesWhatTheStreamStillSends,
// TestMergeSecondSignalWhileSpooling).
func TestSecondSignalAfterWholeStdin(t *testing.T) {
	bin := infohashBinary(t)
	at := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	now := at.Add(time.Minute).Format(time.RFC3339)
	for _, tc := range []struct {
		stage, sub, ext string // inbox sub-folder and spool extension
		stream          func(t *testing.T, known []string) []byte
		applied         string // what the next run's "done" line says
	}{
		{"dedup", "", ".spool", func(*testing.T, []string) []byte { return []byte(hexLines("whole", 50)) }, " new=50 "},
		{"merge", "merge", ".results", func(t *testing.T, known []string) []byte {
			rs := make([]schema.Result, len(known))
			for i, hx := range known {
				h, _, _, err := schema.ParseHex(hx)
				if err != nil {
					t.Fatal(err)
				}
				rs[i] = schema.Result{InfoHash: h, HashType: schema.HashV1, AttemptedAt: at.UnixMilli(),
					Outcome: schema.OutcomeNoPeers, PeerFailures: []schema.PeerFailure{}}
			}
			return resultsArrow(t, rs)
		}, " failures_applied=20 "},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			known := seedHashes(t, data, 20, 3)
			inbox := filepath.Join(data, "inbox", tc.sub)
			lock := holdLock(t, data)
			cmd, stdin, stderr := startPiped(t, bin, tc.stage, "--data", data, "--now", now, "--lock-wait", "5m", "-")
			stdin.Write(tc.stream(t, known))
			stdin.Close()
			var spool string
			waitFor(t, "the whole spool", func() bool {
				m, _ := filepath.Glob(filepath.Join(inbox, "part-*"+tc.ext))
				if len(m) == 1 {
					spool = m[0]
				}
				return len(m) == 1
			})
			cmd.Process.Signal(syscall.SIGINT)
			waitFor(t, "the grace warning", func() bool { return strings.Contains(stderr.String(), "applying what the stream still sends") })
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			want := tc.stage + ": interrupted; nothing committed (stdin was read to its end and is kept whole as " + spool +
				": the next " + tc.stage + " applies it"
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), want) {
				t.Fatalf("exit %v, want 130 saying %q; stderr:\n%s", err, want, stderr.String())
			}
			if strings.Contains(stderr.String(), "partial-*") {
				t.Fatalf("stderr speaks of partial-*:\n%s", stderr.String())
			}
			// What it said: the next run (no arguments) applies the spool.
			syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
			r := ih(t, nil, tc.stage, "--data", data, "--now", now)
			if r.code != 0 || !strings.Contains(r.stderr, tc.applied) {
				t.Fatalf("the next run: exit %d, want 0 and %q in\n%s", r.code, tc.applied, r.stderr)
			}
			if _, err := os.Stat(spool); !os.IsNotExist(err) {
				t.Fatalf("the spool is still there (%v) after the next run", err)
			}
			if m, _ := filepath.Glob(filepath.Join(inbox, "partial-*")); len(m) > 0 {
				t.Fatalf("the next run set aside %v", m)
			}
		})
	}
}

// TestStopBeforeStdinRead: a dedup - or merge - stopped while it waits
// (--lock-wait) for the lock another process holds, to create the dataset
// (dedup) or migrate it (merge, a format-3 dataset), has read nothing of
// stdin: it says so, and that nothing is kept, rather than that stdin is
// kept in the inbox; and the inbox holds no spool.
func TestStopBeforeStdinRead(t *testing.T) {
	bin := infohashBinary(t)
	now := time.Date(2026, 3, 1, 1, 1, 0, 0, time.UTC).Format(time.RFC3339)
	for _, tc := range []struct {
		stage string
		setup func(t *testing.T, data string) // leaves data needing the lock to open
	}{
		{"dedup", func(t *testing.T, data string) { // a new dataset: created under the lock
			if err := os.Mkdir(data, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"merge", func(t *testing.T, data string) { // an older format: migrated under the lock
			seedHashes(t, data, 20, 3)
			toFormat3(t, data)
		}},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			tc.setup(t, data)
			holdLock(t, data)
			cmd, stdin, stderr := startPiped(t, bin, tc.stage, "--data", data, "--now", now, "--lock-wait", "5m", "-")
			defer stdin.Close()
			stdin.Write([]byte(hexLines("unread", 5)))
			waitFor(t, "the wait for the lock", func() bool { return strings.Contains(stderr.String(), "waiting for the writer lock") })
			cmd.Process.Signal(syscall.SIGINT)
			waitFor(t, "the grace warning", func() bool { return strings.Contains(stderr.String(), "applying what the stream still sends") })
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			want := tc.stage + ": interrupted; nothing committed (stopped while opening " + data +
				", before reading stdin: nothing was read from stdin, so nothing of it is kept; send it again)"
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), want) {
				t.Fatalf("exit %v, want 130 saying %q; stderr:\n%s", err, want, stderr.String())
			}
			if m, _ := filepath.Glob(filepath.Join(data, "inbox", "*", "*spool*")); len(m) > 0 {
				t.Fatalf("a spool in the inbox: %v", m)
			}
		})
	}
}

// TestStopCutsParquetStdin: a dedup - or merge - whose stdin is Parquet,
// stopped while its writer is still sending it, cannot keep anything
// usable (a Parquet file is read from the footer at its end): it says so,
// and where the bytes are, not that the next run sets them aside as
// partial-* to apply by name; the next run sets them aside as
// .tmp-*.bad, saying they are not applied. merge said the former.
func TestStopCutsParquetStdin(t *testing.T) {
	bin := infohashBinary(t)
	now := time.Date(2026, 3, 1, 1, 1, 0, 0, time.UTC).Format(time.RFC3339)
	for _, tc := range []struct {
		stage, sub, ext string // inbox sub-folder and spool extension
		seed            bool   // merge needs a dataset
	}{
		{"dedup", "", ".spool", false},
		{"merge", "merge", ".results", true},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			if tc.seed {
				seedHashes(t, data, 20, 3)
			}
			inbox := filepath.Join(data, "inbox", tc.sub)
			cmd, stdin, stderr := startPiped(t, bin, tc.stage, "--data", data, "--now", now, "-")
			defer stdin.Close()
			stdin.Write(append([]byte("PAR1"), make([]byte, 64<<10)...)) // its writer sends the rest later
			waitFor(t, "the spool", func() bool {
				m, _ := filepath.Glob(filepath.Join(inbox, ".tmp-part-*"+tc.ext+"-*"))
				if len(m) != 1 {
					return false
				}
				fi, err := os.Stat(m[0])
				return err == nil && fi.Size() > 0
			})
			cmd.Process.Signal(syscall.SIGINT)
			waitFor(t, "the grace warning", func() bool { return strings.Contains(stderr.String(), "applying what the stream still sends") })
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			want := tc.stage + ": interrupted; nothing committed (stdin is a Parquet file, cut short by the stop: what it had sent is kept in " + inbox +
				" under a .tmp-* name, but cannot be read without the footer at its end and is not applied; the next run sets it aside as .tmp-*.bad"
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), want) {
				t.Fatalf("exit %v, want 130 saying %q; stderr:\n%s", err, want, stderr.String())
			}
			r := ih(t, nil, tc.stage, "--data", data, "--now", now)
			bad, _ := filepath.Glob(filepath.Join(inbox, ".tmp-part-*"+tc.ext+"-*.bad"))
			if len(bad) != 1 || !strings.Contains(r.stderr, "set aside as bad input, not applied") || !strings.Contains(r.stderr, bad[0]) {
				t.Fatalf("the next run: exit %d, set aside %v; stderr:\n%s", r.code, bad, r.stderr)
			}
		})
	}
}

// TestStopMidFIFO: a dedup reading a named FIFO, stopped while its writer
// is still sending, says what it said for stdin: what the FIFO had sent
// is kept in the inbox, the next run sets it aside as partial-*, apply
// it by name if the writer cannot send it again. It said only "nothing
// committed".
func TestStopMidFIFO(t *testing.T) {
	bin := infohashBinary(t)
	now := time.Date(2026, 3, 1, 1, 1, 0, 0, time.UTC).Format(time.RFC3339)
	dir := t.TempDir()
	data, fifo := filepath.Join(dir, "ih"), filepath.Join(dir, "obs.fifo")
	inbox := filepath.Join(data, "inbox")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, stdin, stderr := startPiped(t, bin, "dedup", "--data", data, "--now", now, fifo)
	defer stdin.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // once dedup opens it to read
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write([]byte(hexLines("fifo", 10))) // its writer sends the rest later
	waitFor(t, "the spool", func() bool {
		m, _ := filepath.Glob(filepath.Join(inbox, ".tmp-part-*.spool-*"))
		if len(m) != 1 {
			return false
		}
		fi, err := os.Stat(m[0])
		return err == nil && fi.Size() > 0
	})
	cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "the grace warning", func() bool { return strings.Contains(stderr.String(), "applying what the stream still sends") })
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	want := "dedup: interrupted; nothing committed (what " + fifo + " had sent is kept in " + inbox +
		": the next run sets it aside as partial-*, which `infohash status` lists; apply it by name if its writer cannot send it again)"
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), want) {
		t.Fatalf("exit %v, want 130 saying %q; stderr:\n%s", err, want, stderr.String())
	}
	ih(t, nil, "dedup", "--data", data, "--now", now)
	if m, _ := filepath.Glob(filepath.Join(inbox, "partial-*")); len(m) != 1 {
		t.Fatalf("the next run set aside %v, want one partial input", m)
	}
}
