package app

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestCopiedDatasetIsAnother: `cp -a DIR COPY` kept DIR's dataset_id, so
// the jobs plan-retries planned on COPY merged into DIR as its own. The
// first writer on COPY now gives it an id of its own, keeping DIR's as an
// ancestor: COPY's new jobs are refused by DIR (exit 2, DIR unchanged),
// and the jobs DIR planned before the copy merge into both. status and a
// dry run (plan-retries --limit 0) leave the copy as it is. The jobs DIR
// plans after the copy are DIR's alone: COPY took them as its ancestor's
// (their hashes added, their peers penalised) until its first writer
// recorded which of DIR's passes it holds leases of, whether that writer
// plans or merges those very results. The real binary.
func TestCopiedDatasetIsAnother(t *testing.T) {
	hashes := []string{"0c01000000000000000000000000000000000000", "0c02000000000000000000000000000000000000",
		"0c03000000000000000000000000000000000000"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rfc := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	orig := filepath.Join(t.TempDir(), "orig")
	dedupList(t, orig, rfc(0), hashes...)
	// plan makes one job of data's at --now t0+at and its results.
	plan := func(data string, at time.Duration) string {
		t.Helper()
		jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", rfc(at),
			"--limit", "1", "-o", "-"))
		if len(jobs) != 1 {
			t.Fatalf("%s: %d jobs, want 1", data, len(jobs))
		}
		path := filepath.Join(t.TempDir(), "results.parquet")
		writeRows(t, path, fakeFetch(jobs, t0.Add(at+time.Minute)))
		return path
	}
	ancestor := plan(orig, time.Minute) // planned before the copy: the common ancestor's
	// copied's first writer plans; restored's (a backup restored
	// elsewhere, its leftover results applied first) merges.
	copied, restored := filepath.Join(t.TempDir(), "copy"), filepath.Join(t.TempDir(), "restored")
	for _, dst := range []string{copied, restored} {
		if out, err := exec.Command("cp", "-a", orig, dst).CombinedOutput(); err != nil {
			t.Fatalf("cp -a: %v\n%s", err, out)
		}
	}
	// status reads data's id, ancestors and whether it is a copy not yet
	// given an id of its own.
	var passes map[string][]string // the last status's ancestor_passes
	status := func(data string) (id string, ancestors []string, copied bool) {
		t.Helper()
		var r struct {
			DatasetID      string              `json:"dataset_id"`
			AncestorIDs    []string            `json:"ancestor_ids"`
			AncestorPasses map[string][]string `json:"ancestor_passes"`
			Copied         bool                `json:"copied"`
		}
		if err := json.Unmarshal(mustRun(t, nil, "status", "--data", data, "--format", "json"), &r); err != nil {
			t.Fatal(err)
		}
		passes = r.AncestorPasses
		return r.DatasetID, r.AncestorIDs, r.Copied
	}
	origID, _, _ := status(orig)
	mustRun(t, nil, "plan-retries", "--data", copied, "--far-now", "--now", rfc(2*time.Minute), "--limit", "0")
	if id, _, isCopy := status(copied); id != origID || !isCopy {
		t.Fatalf("the copy after status and a dry run: id %s, copied %v; want the original's %s, copied (nothing written)", id, isCopy, origID)
	}
	fromCopy := plan(copied, 2*time.Minute)
	if id, anc, isCopy := status(copied); id == origID || isCopy || len(anc) != 1 || anc[0] != origID {
		t.Fatalf("the copy after plan-retries: id %s, ancestors %v, copied %v; want a new id, ancestors [%s]", id, anc, isCopy, origID)
	}
	pass := strings.TrimSuffix(strings.TrimPrefix(readRows[schema.Result](t, ancestor)[0].LeaseID, "L"), "-"+origID)
	if !reflect.DeepEqual(passes, map[string][]string{origID: {pass}}) {
		t.Fatalf("the copy's status: ancestor_passes %v, want the pass of the jobs planned before the copy, {%s: [%s]}", passes, origID, pass)
	}
	if out := mustRun(t, nil, "status", "--data", copied); !strings.Contains(string(out), ", copied from "+origID+")") {
		t.Fatalf("status of the copy does not say it was copied from %s:\n%s", origID, out)
	}
	merge := func(data, res string) cliRun {
		t.Helper()
		return ih(t, nil, "merge", "--data", data, "--far-now", "--now", rfc(10*time.Minute), res)
	}
	afterCopy := plan(orig, 3*time.Minute) // the original's, planned after the copy
	for _, data := range []string{copied, restored} {
		beforeCopy := stateCSV(t, data)
		if r := merge(data, afterCopy); r.code != 2 || !strings.Contains(r.stderr, "results of another dataset's jobs") ||
			!strings.Contains(r.stderr, filepath.Base(afterCopy)+": row 1:") {
			t.Fatalf("merge of the original's jobs planned after the copy into %s: exit %d\n%s\nwant exit 2, refused", data, r.code, r.stderr)
		}
		if after := stateCSV(t, data); after != beforeCopy {
			t.Fatalf("%s: the state changed by a refused merge:\n%s\nwas\n%s", data, after, beforeCopy)
		}
	}
	before := stateCSV(t, orig)
	if r := merge(orig, fromCopy); r.code != 2 || !strings.Contains(r.stderr, "results of another dataset's jobs") {
		t.Fatalf("merge of the copy's new jobs' results into the original: exit %d\n%s\nwant exit 2, refused", r.code, r.stderr)
	}
	if after := stateCSV(t, orig); after != before {
		t.Fatalf("the original's state changed by a refused merge:\n%s\nwas\n%s", after, before)
	}
	for _, m := range []struct{ name, data, res string }{
		{"ancestor's jobs into the original", orig, ancestor},
		{"the original's jobs after the copy into the original", orig, afterCopy},
		{"ancestor's jobs into the copy", copied, ancestor},
		{"ancestor's jobs into the restored copy", restored, ancestor},
		{"the copy's own jobs into the copy", copied, fromCopy},
	} {
		if r := merge(m.data, m.res); r.code != 0 || !strings.Contains(r.stderr, "failures_applied=1") {
			t.Fatalf("%s: exit %d\n%s\nwant 1 failure applied", m.name, r.code, r.stderr)
		}
	}
}
