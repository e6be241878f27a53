package app

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMergeSecondSignalWhileSpooling: a merge - whose writer holds stdin
// open stops at a second signal, as dedup - does: exit 130 at once,
// nothing committed, and what stdin had sent kept in DIR/inbox/merge/
// (under the spool's temporary name, synced, for the next run to set
// aside) as its message says. It used to copy stdin to its end whatever
// the signals, so a writer that never closed kept it running.
func TestMergeSecondSignalWhileSpooling(t *testing.T) {
	bin := infohashBinary(t)
	data := filepath.Join(t.TempDir(), "ih")
	_, at, stream := noPeersStream(t, data)
	half := stream[:len(stream)/2]
	inbox := filepath.Join(data, "inbox", "merge")
	cmd, stdin, stderr := startPiped(t, bin, "merge", "--data", data, "--now", at.Add(time.Minute).Format(time.RFC3339), "-")
	defer stdin.Close()
	stdin.Write(half)
	waitFor(t, "merge's stdin spool", func() bool {
		m, _ := filepath.Glob(filepath.Join(inbox, ".tmp-*"))
		if len(m) != 1 {
			return false
		}
		fi, err := os.Stat(m[0])
		return err == nil && fi.Size() == int64(len(half))
	})
	cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, "the grace warning", func() bool { return strings.Contains(stderr.String(), "applying what the stream still sends") })
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running 20 s after the second signal (its writer holds stdin open); stderr:\n%s", stderr.String())
	}
	want := "merge: interrupted; nothing committed (what stdin had sent is kept in " + inbox + ": the next run sets it aside"
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), want) {
		t.Fatalf("exit %v, want 130 saying %q; stderr:\n%s", err, want, stderr.String())
	}
	ents, _ := os.ReadDir(inbox)
	tmp, _ := filepath.Glob(filepath.Join(inbox, ".tmp-*"))
	if len(ents) != 1 || len(tmp) != 1 {
		t.Fatalf("inbox/merge holds %v; want the one temporary spool", ents)
	}
	if b, err := os.ReadFile(tmp[0]); err != nil || !bytes.Equal(b, half) {
		t.Fatalf("the kept spool holds %d bytes (%v); want the %d sent", len(b), err, len(half))
	}
}
