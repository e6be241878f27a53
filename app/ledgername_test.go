package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestLedgerNamesAbsolute: run from a folder with a relative --data and
// relative inputs, dedup and merge record each input in the ledger by its
// absolute path (status's last input, export --table ledger): they
// recorded it as given ("h.txt", "ds/inbox/…"), which names no file to a
// person reading status in another folder. The ids stay the content's:
// the same file named another way is already applied.
func TestLedgerNamesAbsolute(t *testing.T) {
	top := t.TempDir()
	t.Chdir(top)
	past := time.Now().UTC().AddDate(0, 0, -1).Truncate(time.Hour)
	at := func(d time.Duration) string { return past.Add(d).Format(time.RFC3339) }
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hex := func(i int) []byte { return []byte(fmt.Sprintf("%040x\n", i)) }
	write("h 1.txt", hex(1))
	if err := os.Mkdir("in ø", 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := rowio.Create[schema.Observation]("in ø/x.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]schema.Observation{{InfoHash: schema.Hash{2}, HashType: schema.HashV1,
		ObservedAt: past.UnixMilli(), Source: schema.SourceImport}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMain(t, "dedup", "--data", "other", "--now", at(0), "h 1.txt"); code != 0 {
		t.Fatalf("dedup of the other dataset: exit %d: %s", code, stderr)
	}
	if err := syscall.Mkfifo("q.fifo", 0o644); err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return filepath.Join(top, p) }
	for _, st := range []struct {
		name  string
		args  []string
		stdin func() []byte
		want  string // the ledger's newest name; a prefix if it ends in "/"
	}{
		{"dedup a file", []string{"dedup", "--data", "ds", "--now", at(0), "h 1.txt"}, nil, abs("h 1.txt")},
		{"dedup a folder's file", []string{"dedup", "--data", "ds", "--now", at(0), "in ø"}, nil, abs("in ø/x.parquet")},
		{"dedup stdin", []string{"dedup", "--data", "ds", "--now", at(0), "-"}, func() []byte { return hex(3) },
			"stdin (" + abs("ds/inbox") + "/"},
		{"dedup a FIFO", []string{"dedup", "--data", "ds", "--now", at(0), "q.fifo"}, func() []byte {
			go func() { os.WriteFile("q.fifo", hex(4), 0) }() // blocks until dedup opens it
			return nil
		}, abs("q.fifo") + " (" + abs("ds/inbox") + "/"},
		{"merge a file", []string{"merge", "--data", "ds", "--now", at(2 * time.Hour), "res.arrows"}, func() []byte {
			stdout, stderr, code := runMain(t, "plan-retries", "--data", "ds", "--now", at(time.Hour), "-o", "-")
			if code != 0 {
				t.Fatalf("plan-retries: exit %d: %s", code, stderr)
			}
			write("res.arrows", resultsArrow(t, fakeFetch(decodeJobs(t, []byte(stdout)), past.Add(time.Hour+time.Minute))))
			return nil
		}, abs("res.arrows")},
		{"merge --from", []string{"merge", "--data", "ds", "--now", at(3 * time.Hour), "--from", "other"}, nil,
			"merge --from " + abs("other") + " (snapshot 1)"},
	} {
		t.Run(st.name, func(t *testing.T) {
			var stdin []byte
			if st.stdin != nil {
				stdin = st.stdin()
			}
			if _, stderr, code := runMainIn(t, stdin, st.args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			out, stderr, code := runMain(t, "status", "--data", "ds", "--format", "json")
			if code != 0 {
				t.Fatalf("status: exit %d: %s", code, stderr)
			}
			var r struct {
				LastInput struct{ Name string } `json:"last_input"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			got := r.LastInput.Name
			if strings.HasSuffix(st.want, "/") && !strings.HasPrefix(got, st.want) || !strings.HasSuffix(st.want, "/") && got != st.want {
				t.Errorf("the ledger names the input %q, want %q", got, st.want)
			}
		})
	}
	// The id is the content's: the file named by its absolute path is
	// already applied.
	_, stderr, code := runMain(t, "dedup", "--data", "ds", "--now", at(4*time.Hour), "--log-format", "json", abs("h 1.txt"))
	if code != 0 || !strings.Contains(stderr, `"already_applied":1`) {
		t.Errorf("dedup of %s again: exit %d, want 0 with already_applied 1: %s", abs("h 1.txt"), code, stderr)
	}
}
