package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// freshInputs writes the inputs of the tests below into dir: a good hash
// list, a good observation Parquet file, and bad ones.
func freshInputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	p := map[string]string{
		"good.txt": filepath.Join(dir, "good.txt"), "bad.txt": filepath.Join(dir, "bad.txt"),
		"obs.parquet": filepath.Join(dir, "obs.parquet"), "truncated.parquet": filepath.Join(dir, "truncated.parquet"),
		"jobs.parquet": filepath.Join(dir, "jobs.parquet"), "missing": filepath.Join(dir, "missing.parquet"),
		"empty folder": filepath.Join(dir, "nothing"),
	}
	files := map[string]string{
		"good.txt": "0123456789abcdef0123456789abcdef01234567\n",
		"bad.txt":  "0123456789abcdef0123456789abcdef01234567\nzzzz\n",
	}
	for name, text := range files {
		if err := os.WriteFile(p[name], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeRows(t, p["obs.parquet"], []schema.Observation{{InfoHash: schema.Hash{1}, ObservedAt: time.Now().UnixMilli(), Source: schema.SourceImport}})
	whole, err := os.ReadFile(p["obs.parquet"])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p["truncated.parquet"], whole[:len(whole)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	writeJobs(t, p["jobs.parquet"], []schema.Job{{InfoHash: schema.Hash{2}}})
	if err := os.Mkdir(p["empty folder"], 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// badStdin are streams dedup refuses as bad input on stdin.
var badStdin = map[string][]byte{
	"bad Arrow stream": []byte("\xff\xff\xff\xffnot an Arrow message at all"),
	"bad hex line":     []byte("zzzz\n"),
}

// TestFreshDataRemovedOnBadInput: a dedup that creates its dataset (in a
// missing folder, or an empty one, which stays) and then commits nothing
// removes it again, unless its inbox holds what was read from stdin; bad
// input leaves an existing dataset as it was.
func TestFreshDataRemovedOnBadInput(t *testing.T) {
	dir := t.TempDir()
	in := freshInputs(t, dir)
	for _, tc := range []struct {
		name   string
		inputs []string // keys of in, or "-" for stdin
		stdin  string   // key of badStdin
		extra  []string // flags
		empty  bool     // DIR is an empty folder to begin with
		code   int
		exists bool   // DIR afterwards
		inbox  string // suffix of the file DIR/inbox holds
		log    string // in stderr
	}{
		{name: "bad hex line", inputs: []string{"bad.txt"}, code: 2},
		{name: "truncated Parquet", inputs: []string{"truncated.parquet"}, code: 2},
		{name: "truncated Parquet after a good input", inputs: []string{"good.txt", "truncated.parquet"}, code: 2},
		{name: "wrong schema", inputs: []string{"jobs.parquet"}, code: 2},
		{name: "missing file", inputs: []string{"missing"}, code: 2},
		{name: "folder without input files", inputs: []string{"empty folder"}, code: 0, log: "no input files; nothing to apply"},
		{name: "folder without input files into an empty folder", inputs: []string{"empty folder"}, empty: true, code: 0, log: "no input files; nothing to apply"},
		{name: "no input", code: 2},
		{name: "bad hex line into an empty folder", inputs: []string{"bad.txt"}, empty: true, code: 2},
		{name: "truncated Parquet after a good input into an empty folder", inputs: []string{"good.txt", "truncated.parquet"}, empty: true, code: 2},
		{name: "bad hex line on stdin into an empty folder", inputs: []string{"-"}, stdin: "bad hex line", empty: true, code: 2, exists: true, inbox: ".bad", log: "kept the new dataset"},
		{name: "bad Arrow stream on stdin", inputs: []string{"-"}, stdin: "bad Arrow stream", code: 2, exists: true, inbox: ".bad", log: "kept the new dataset"},
		{name: "bad hex line on stdin", inputs: []string{"-"}, stdin: "bad hex line", code: 2, exists: true, inbox: ".bad", log: "kept the new dataset"},
		{name: "bad after a commit", inputs: []string{"good.txt", "bad.txt"}, extra: []string{"--batch-hashes", "1"}, code: 3, exists: true, log: "created a new dataset"},
		{name: "good input", inputs: []string{"good.txt", "obs.parquet"}, code: 0, exists: true, log: "created a new dataset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			if tc.empty {
				if err := os.Mkdir(data, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"dedup", "--data", data}, tc.extra...)
			for _, k := range tc.inputs {
				if k != "-" {
					k = in[k]
				}
				args = append(args, k)
			}
			_, stderr, code := runMainIn(t, badStdin[tc.stdin], args...)
			if code != tc.code || !strings.Contains(stderr, tc.log) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.log)
			}
			if (tc.code == 2 && tc.inbox == "" || tc.code == 0 && !tc.exists) && strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line", stderr)
			}
			if strings.Contains(stderr, "created a new") && tc.code == 2 {
				t.Errorf("stderr %q says a dataset was created by a run that committed nothing", stderr)
			}
			fi, err := os.Stat(data)
			if !tc.exists && tc.empty {
				ents, err := os.ReadDir(data)
				if err != nil || len(ents) > 0 || fi.Mode().Perm() != 0o700 {
					t.Fatalf("%s: %v (%v, %v); want the user's empty folder back", data, ents, fi, err)
				}
				return
			}
			if !tc.exists {
				if !os.IsNotExist(err) {
					t.Fatalf("%s left behind (stat: %v)", data, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
			if tc.inbox == "" {
				if len(ents) > 0 {
					t.Errorf("inbox holds %s", ents[0].Name())
				}
				return
			}
			if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), tc.inbox) || !strings.Contains(stderr, "inbox/"+ents[0].Name()) {
				t.Fatalf("inbox %v, stderr %q; want one *%s file, named", ents, stderr, tc.inbox)
			}
		})
	}
}

// TestExistingDataUntouchedByBadInput: bad input given to an existing
// dataset changes none of its files.
func TestExistingDataUntouchedByBadInput(t *testing.T) {
	dir, data := seedDataset(t)
	in := freshInputs(t, dir)
	snap, _ := currentManifest(t, data)
	for _, k := range []string{"bad.txt", "truncated.parquet", "jobs.parquet", "missing"} {
		t.Run(k, func(t *testing.T) {
			before := dataFiles(t, data)
			if _, stderr, code := runMain(t, "dedup", "--data", data, in[k]); code != 2 {
				t.Fatalf("exit %d, stderr %q; want 2", code, stderr)
			}
			sameTree(t, before, dataFiles(t, data))
			if now, _ := currentManifest(t, data); now != snap {
				t.Errorf("snapshot %d, was %d", now, snap)
			}
		})
	}
}

// dataFiles is fsutiltest.Tree without what opening a dataset to write changes:
// DIR/LOCK (rewritten with the writer's PID) and the times of folders (a
// transaction begun and aborted adds a folder to staging/ and removes it).
func dataFiles(t *testing.T, data string) map[string]string {
	t.Helper()
	files := fsutiltest.Tree(t, data)
	delete(files, filepath.Join(data, "LOCK"))
	for p, s := range files {
		if strings.HasPrefix(s, "d") {
			files[p] = "folder"
		}
	}
	return files
}

// TestFreshDataRemovedOnInterrupt: interrupted before its first commit, a
// writer that created its dataset removes it.
func TestFreshDataRemovedOnInterrupt(t *testing.T) {
	dir, seeded := seedDataset(t)
	in := freshInputs(t, dir)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"dedup", []string{"dedup", in["good.txt"]}},
		{"merge --from", []string{"merge", "--from", seeded}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr bytes.Buffer
			args := append([]string{"infohash", tc.args[0], "--data", data}, tc.args[1:]...)
			if code := run(ctx, args, strings.NewReader(""), &stdout, &stderr); code != 130 {
				t.Fatalf("exit %d, stderr %q; want 130", code, stderr.String())
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Fatalf("%s left behind (stat: %v)", data, err)
			}
			if strings.Contains(stderr.String(), "created a new") {
				t.Fatalf("stderr announces a dataset that was removed: %q", stderr.String())
			}
		})
	}
}

// TestMergeFromAnnouncesNewDataset: merge --from into a new DIR says it
// made a dataset once it has committed to it.
func TestMergeFromAnnouncesNewDataset(t *testing.T) {
	_, seeded := seedDataset(t)
	data := filepath.Join(t.TempDir(), "ds")
	var stdout, stderr bytes.Buffer
	args := []string{"infohash", "merge", "--data", data, "--from", seeded}
	if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "merge --from: created a new dataset") {
		t.Fatalf("no announcement of the new dataset in %q", stderr.String())
	}
}

// TestDefaultPolicyWhileNewDatasetRemoved: a run writing the default
// policy into a new DIR while another run, whose input was bad, cleans up
// the dataset it made there keeps DIR (the clean-up leaves it alone) and
// writes its policy.
func TestDefaultPolicyWhileNewDatasetRemoved(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	var kept string
	policyDirReady = func(dir string) {
		var err error
		if kept, err = dataset.RemoveUnused(dir, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { policyDirReady = nil })
	if _, err := loadPolicy(data); err != nil {
		t.Fatalf("loadPolicy while another run cleaned up: %v", err)
	}
	if kept != "another run has it open" {
		t.Errorf("the clean-up kept %q; want it to leave DIR to the run writing its policy", kept)
	}
	if _, err := os.Stat(schedule.Path(data)); err != nil {
		t.Errorf("no default policy: %v", err)
	}
}
