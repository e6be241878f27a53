package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runMainIn is runMain with stdin.
func runMainIn(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(append([]string{"infohash"}, args...), bytes.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// currentManifest reads the snapshot number and created_at of data's
// latest manifest.
func currentManifest(t *testing.T, data string) (snap int64, created time.Time) {
	t.Helper()
	name, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(data, "manifests", strings.TrimSpace(string(name))))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Snapshot  int64     `json:"snapshot"`
		CreatedAt time.Time `json:"created_at"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Snapshot, m.CreatedAt
}

// TestCreatedAtIsWallClock: a manifest's created_at is when the snapshot
// was made, whatever --now says (--now is the pass's logical clock, for
// next_retry and the like). plan-retries and merge used to record --now,
// so status showed a snapshot made in the future or the past; dedup
// recorded the wall clock.
func TestCreatedAtIsWallClock(t *testing.T) {
	dir := t.TempDir()
	data, other := filepath.Join(dir, "ds"), filepath.Join(dir, "other")
	// Years back, but within the 10 years a --now may be from the wall
	// clock without --far-now.
	past := time.Now().UTC().AddDate(-3, 0, 0).Truncate(time.Hour)
	at := func(d time.Duration) string { return past.Add(d).Format(time.RFC3339) }
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	otherHashes := filepath.Join(dir, "o.txt")
	if err := os.WriteFile(otherHashes, []byte("fedcba9876543210fedcba9876543210fedcba98\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMain(t, "dedup", "--data", other, "--now", at(0), otherHashes); code != 0 {
		t.Fatalf("dedup of the other dataset: exit %d: %s", code, stderr)
	}
	var jobs []byte
	for _, st := range []struct {
		name  string
		args  []string
		stdin func() []byte
	}{
		{"dedup", []string{"dedup", "--data", data, "--now", at(0), hashes}, nil},
		{"plan-retries", []string{"plan-retries", "--data", data, "--now", at(time.Hour), "-o", "-"}, nil},
		{"merge", []string{"merge", "--data", data, "--now", at(2 * time.Hour), "-"}, func() []byte {
			return resultsArrow(t, fakeFetch(decodeJobs(t, jobs), past.Add(time.Hour+time.Minute)))
		}},
		{"merge --from", []string{"merge", "--data", data, "--now", at(3 * time.Hour), "--from", other}, nil},
	} {
		t.Run(st.name, func(t *testing.T) {
			var stdin []byte
			if st.stdin != nil {
				stdin = st.stdin()
			}
			before := time.Now().Truncate(time.Second) // created_at may keep seconds only
			snap0 := int64(-1)
			if _, err := os.Stat(data); err == nil {
				snap0, _ = currentManifest(t, data)
			}
			stdout, stderr, code := runMainIn(t, stdin, st.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if st.name == "plan-retries" {
				jobs = []byte(stdout)
			}
			snap, created := currentManifest(t, data)
			if snap <= snap0 {
				t.Fatalf("no snapshot committed (still %d)", snap)
			}
			if after := time.Now(); created.Before(before) || created.After(after) {
				t.Fatalf("created_at %v, want the wall clock (between %v and %v), not --now", created, before, after)
			}
		})
	}
}
