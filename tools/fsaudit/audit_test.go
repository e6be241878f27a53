package fsaudit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAudit replays the synthetic traces of testdata/ and checks each
// gets the violations it should: the trace line, call, file and cause.
func TestAudit(t *testing.T) {
	type want struct {
		line int
		call string
		path string
		what string // a part of the message
	}
	tests := []struct {
		trace string
		want  []want
	}{
		{"correct.trace", nil},
		{"manifest-renamed-before-fsync.trace", []want{{27, "renameat", "/w/d/manifests/000000000001.json",
			"publishes a commit before it is durable (a power cut once this rename reaches the disk): the manifest CURRENT names has data that is not durable: written at line 17 (write), never synced"}}},
		{"state-written-after-fsync.trace", []want{{31, "renameat", "/w/d/state/v/1/prefix=00/part-1.parquet",
			"has data that is not durable: written at line 17 (pwrite64) after its last sync, at line 14"}}},
		// the dataset's folder, from before the trace, opened as a file
		// would be (no O_DIRECTORY) before it is used as a folder
		{"open-before-mkdir.trace", []want{{33, "renameat", "/w/d/state/v/1/prefix=00/part-1.parquet",
			"has data that is not durable: written at line 19 (pwrite64) after its last sync, at line 16"}}},
		{"current-no-dirsync.trace", []want{{30, "exit_group", "/w/d/CURRENT",
			"exits 0 before its commit's rename of CURRENT (line 28) is durable: its entry CURRENT in /w/d (renameat at line 28) is not durable"}}},
		{"syncfs-covers-all.trace", nil},
		{"unlink-needed.trace", []want{{58, "unlinkat", "/w/d/state/v/1/prefix=00/part-1.parquet",
			"removes what the durable CURRENT's snapshot (manifest 000000000001.json) needs"}}},
		{"interleaved-ok.trace", nil},
		// both with sendmsg, recvmsg (unfinished, resumed) and writes
		// to sockets (-y's socket:[N], -yy's TCP:[A->B]) interleaved
		{"interleaved-late-write.trace", []want{{35, "renameat", "/w/d/state/v/1/prefix=00/part-1.parquet",
			"written at line 16 (pwrite64), never synced"}}},
		{"output-renamed-before-fsync.trace", []want{
			{4, "rename", "/w/out.csv", "renames the output into place before its data is durable: written at line 2 (write)"},
			{7, "exit_group", "/w/out.csv", "exits 0 before its output's rename (line 4) is durable"}}},
		// an output written as O_TMPFILE, named by linkat(/proc/self/fd/N)
		{"output-tmpfile.trace", nil},
		// stdout redirected to the output (-o - > FILE): written in place
		{"output-stdout.trace", nil},
		{"output-stdout-unsynced.trace", []want{{5, "exit_group", "/w/out.csv",
			"exits 0 before its output, written in place, is durable: written at line 3 (write) after its last sync, at line 2"}}},
		{"output-tmpfile-unsynced.trace", []want{
			{4, "renameat", "/w/out.csv", "renames the output into place before its data is durable: written at line 3 (write)"},
			{8, "exit_group", "/w/out.csv", "its data is not durable"}}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.trace, ".trace"), func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.trace))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep, err := Audit(f, Config{Cwd: "/w", Outputs: []string{"/w/out.csv"}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Exit != 0 {
				t.Errorf("exit %d, want 0", rep.Exit)
			}
			if len(rep.Violations) != len(tt.want) {
				t.Fatalf("%d violations, want %d: %v", len(rep.Violations), len(tt.want), rep.Violations)
			}
			for i, w := range tt.want {
				v := rep.Violations[i]
				if v.Line != w.line || v.Call != w.call || v.Path != w.path || !strings.Contains(v.What, w.what) {
					t.Errorf("violation %d:\n got %s\nwant line %d: %s %s: ...%s...", i, v, w.line, w.call, w.path, w.what)
				}
			}
		})
	}
}

// TestBefore checks a trace against a dataset copy as it was: the
// durable CURRENT before the trace names a manifest whose files the
// trace then removes.
func TestBefore(t *testing.T) {
	dir := t.TempDir()
	for p, s := range map[string]string{
		"CURRENT":                       "000000000001.json\n",
		"manifests/000000000001.json":   `{"tables": {"state": {"dir": "state/v/1", "partitions": {"00": [{"name": "a.parquet"}]}}}}`,
		"state/v/1/prefix=00/a.parquet": "PAR1",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, trace string
		want        int
	}{
		{"unlink of a file it needs", `1 unlinkat(AT_FDCWD</w>, "d/state/v/1/prefix=00/a.parquet", 0) = 0` + "\n", 1},
		{"rewrite of a file it needs", `1 openat(AT_FDCWD</w>, "d/state/v/1/prefix=00/a.parquet", O_WRONLY|O_TRUNC) = 3</w/d/state/v/1/prefix=00/a.parquet>` + "\n", 1},
		{"unlink of a file it does not need", `1 unlinkat(AT_FDCWD</w>, "d/policy.json", 0) = 0` + "\n", 0},
		{"a failed unlink", `1 unlinkat(AT_FDCWD</w>, "d/state/v/1/prefix=00/a.parquet", 0) = -1 EACCES (Permission denied)` + "\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Audit(strings.NewReader(tt.trace), Config{Before: map[string]string{"/w/d": dir}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Violations) != tt.want || rep.Held != 3 {
				t.Errorf("%d violations (%v), %d files held; want %d, 3 (CURRENT, manifest, a.parquet)", len(rep.Violations), rep.Violations, rep.Held, tt.want)
			}
		})
	}
}

// TestExit checks which line ends the traced process: its exit_group,
// even unfinished, or its first thread's exit, not another thread's.
func TestExit(t *testing.T) {
	commit := "1 renameat(AT_FDCWD</w>, \"d/.tmp-CURRENT\", AT_FDCWD</w>, \"d/CURRENT\") = 0\n"
	tests := []struct {
		name, trace string
		status      int
		line        int // of the violation: the exit before the rename is durable
	}{
		{"exit_group", commit + "1 exit_group(0) = ?\n1 +++ exited with 0 +++\n", 0, 2},
		{"exit_group unfinished", commit + "1 exit_group(3 <unfinished ...>\n2 write(2</dev/null>, \"x\", 1) = 1\n2 +++ exited with 3 +++\n1 +++ exited with 3 +++\n", 3, 2},
		{"another thread ends first", commit + "2 +++ exited with 0 +++\n1 fsync(4</w/e>) = 0\n1 +++ exited with 0 +++\n", 0, 4},
		{"no pids", "renameat(AT_FDCWD</w>, \"d/.tmp-CURRENT\", AT_FDCWD</w>, \"d/CURRENT\") = 0\n+++ exited with 130 +++\n", 130, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Audit(strings.NewReader(tt.trace), Config{Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Exit != tt.status || len(rep.Violations) != 1 || rep.Violations[0].Line != tt.line {
				t.Errorf("exit %d, violations %v; want exit %d, one at line %d", rep.Exit, rep.Violations, tt.status, tt.line)
			}
		})
	}
}

// TestRules checks the model's rules one by one on a commit of a file
// /w/d/f, which the manifest lists: its write, then what makes it
// durable (or not) before the rename of CURRENT.
func TestRules(t *testing.T) {
	const head = `1 mkdirat(AT_FDCWD</w>, "d/manifests", 0755) = 0
1 openat(AT_FDCWD</w>, "d/m", O_RDWR|O_CREAT|O_EXCL, 0666) = 3</w/d/m>
1 write(3</w/d/m>, "{\"tables\": {\"t\": {\"dir\": \"\", \"partitions\": {\"\": [{\"name\": \"f\"}]}}}}", 67) = 67
1 fsync(3</w/d/m>) = 0
1 renameat(AT_FDCWD</w>, "d/m", AT_FDCWD</w>, "d/manifests/000000000001.json") = 0
1 openat(AT_FDCWD</w>, "d/manifests", O_RDONLY) = 9</w/d/manifests>
1 fsync(9</w/d/manifests>) = 0
1 openat(AT_FDCWD</w>, "d/c", O_RDWR|O_CREAT|O_EXCL, 0666) = 4</w/d/c>
1 write(4</w/d/c>, "000000000001.json\n", 18) = 18
1 fsync(4</w/d/c>) = 0
`
	const tail = `1 openat(AT_FDCWD</w>, "d", O_RDONLY) = 6</w/d>
1 fsync(6</w/d>) = 0
1 renameat(AT_FDCWD</w>, "d/c", AT_FDCWD</w>, "d/CURRENT") = 0
1 fsync(6</w/d>) = 0
1 exit_group(0) = ?
`
	const open, direct = `1 openat(AT_FDCWD</w>, "d/f", O_RDWR|O_CREAT, 0666) = 5</w/d/f>
`, `1 openat(AT_FDCWD</w>, "d/f", O_RDWR|O_CREAT|O_DIRECT, 0666) = 5</w/d/f>
`
	const write, syncfs = `1 pwrite64(5</w/d/f>, "x", 1, 0) = 1
`, `1 openat(AT_FDCWD</w>, "d", O_RDONLY) = 7</w/d>
1 syncfs(7</w/d>) = 0
`
	tests := []struct {
		name, calls string
		violation   bool // at the rename of CURRENT: f's data is not durable
	}{
		{"fsync after the write", open + write + "1 fsync(5</w/d/f>) = 0\n", false},
		{"fdatasync after the write", open + write + "1 fdatasync(5</w/d/f>) = 0\n", false},
		{"syncfs after the write", open + write + syncfs, false},
		{"sync after the write", open + write + "1 sync() = 0\n", false},
		{"fsync before the write", open + "1 fsync(5</w/d/f>) = 0\n" + write, true},
		{"no sync", open + write, true},
		{"O_DIRECT, no sync", direct + write, true},
		{"O_DIRECT, syncfs", direct + write + syncfs, false},
		{"sync_file_range is no sync", open + write + "1 sync_file_range(5</w/d/f>, 0, 0, SYNC_FILE_RANGE_WRITE) = 0\n", true},
		{"ftruncate after the fsync", open + write + "1 fsync(5</w/d/f>) = 0\n1 ftruncate(5</w/d/f>, 0) = 0\n", true},
		{"copy_file_range into it", open + "1 openat(AT_FDCWD</w>, \"/src\", O_RDONLY) = 8</src>\n" +
			"1 copy_file_range(8</src>, NULL, 5</w/d/f>, NULL, 100, 0) = 100\n", true},
		{"a failed write", open + "1 fsync(5</w/d/f>) = 0\n1 pwrite64(5</w/d/f>, \"x\", 1, 0) = -1 ENOSPC (No space left on device)\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Audit(strings.NewReader(head+tt.calls+tail), Config{Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			got := len(rep.Violations) > 0
			if got != tt.violation || len(rep.Violations) > 1 || rep.Held != 3 ||
				got && (rep.Violations[0].Path != "/w/d/f" || !strings.Contains(rep.Violations[0].What, "has data that is not durable")) {
				t.Errorf("violations %v, %d files held; want a violation of /w/d/f's data: %v, 3 files", rep.Violations, rep.Held, tt.violation)
			}
		})
	}
}

// TestCutManifest: a manifest whose write strace cut short (-s) cannot be
// checked, which the audit reports rather than pass.
func TestCutManifest(t *testing.T) {
	trace := `1 openat(AT_FDCWD</w>, "d/m", O_RDWR|O_CREAT|O_EXCL, 0666) = 3</w/d/m>
1 write(3</w/d/m>, "{\"tab"..., 67) = 67
1 fsync(3</w/d/m>) = 0
1 renameat(AT_FDCWD</w>, "d/m", AT_FDCWD</w>, "d/manifests/000000000001.json") = 0
1 openat(AT_FDCWD</w>, "d/manifests", O_RDONLY) = 9</w/d/manifests>
1 fsync(9</w/d/manifests>) = 0
1 openat(AT_FDCWD</w>, "d/c", O_RDWR|O_CREAT|O_EXCL, 0666) = 4</w/d/c>
1 write(4</w/d/c>, "000000000001.json\n", 18) = 18
1 fsync(4</w/d/c>) = 0
1 renameat(AT_FDCWD</w>, "d/c", AT_FDCWD</w>, "d/CURRENT") = 0
`
	rep, err := Audit(strings.NewReader(trace), Config{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 1 || !strings.Contains(rep.Violations[0].What, "its content is not in the trace (strace -s cut it)") {
		t.Errorf("violations %v; want one: the manifest's content is not in the trace", rep.Violations)
	}
}

// TestSocketFD: a descriptor -y shows as a socket (or pipe) is no file,
// whatever file the trace last saw open under its number (a close the
// trace missed; a socket's descriptor comes from calls not traced): its
// writes do not touch that file.
func TestSocketFD(t *testing.T) {
	const commit = `1 openat(AT_FDCWD</w>, "d/f", O_RDWR|O_CREAT, 0666) = 5</w/d/f>
1 pwrite64(5</w/d/f>, "x", 1, 0) = 1
1 fsync(5</w/d/f>) = 0
1 mkdirat(AT_FDCWD</w>, "d/manifests", 0755) = 0
1 openat(AT_FDCWD</w>, "d/m", O_RDWR|O_CREAT|O_EXCL, 0666) = 3</w/d/m>
1 write(3</w/d/m>, "{\"tables\": {\"t\": {\"dir\": \"\", \"partitions\": {\"\": [{\"name\": \"f\"}]}}}}", 67) = 67
1 fsync(3</w/d/m>) = 0
1 renameat(AT_FDCWD</w>, "d/m", AT_FDCWD</w>, "d/manifests/000000000001.json") = 0
1 openat(AT_FDCWD</w>, "d/c", O_RDWR|O_CREAT|O_EXCL, 0666) = 4</w/d/c>
1 write(4</w/d/c>, "000000000001.json\n", 18) = 18
1 fsync(4</w/d/c>) = 0
1 openat(AT_FDCWD</w>, "d", O_RDONLY) = 6</w/d>
1 syncfs(6</w/d>) = 0
`
	const tail = `1 renameat(AT_FDCWD</w>, "d/c", AT_FDCWD</w>, "d/CURRENT") = 0
1 fsync(6</w/d>) = 0
1 exit_group(0) = ?
`
	tests := []struct {
		name, write string
		violation   bool
	}{
		{"the file itself", "1 pwrite64(5</w/d/f>, \"y\", 1, 0) = 1\n", true},
		{"a socket (-y)", "2 write(5<socket:[2767443]>, \"y\", 1) = 1\n", false},
		{"a socket (-yy)", "2 write(5<TCP:[127.0.0.1:52376->127.0.0.1:6881]>, \"y\", 1) = 1\n", false},
		{"a pipe, unfinished", "2 write(5<pipe:[99]>, \"y\", 1 <unfinished ...>\n1 getpid() = 1\n2 <... write resumed>) = 1\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Audit(strings.NewReader(commit+tt.write+tail), Config{Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rep.Violations) > 0; got != tt.violation || rep.Held != 3 {
				t.Errorf("violations %v, %d files held; want a violation: %v, 3 files", rep.Violations, rep.Held, tt.violation)
			}
		})
	}
}

// TestInflight: a call's effect happens between its entry and its exit,
// but strace prints its end only once the thread stops at the exit. A
// thread preempted in between leaves its line "<unfinished ...>" while
// another thread uses what it made (or removed), in lines printed before
// its "<... resumed>" (two goroutines' os.MkdirAll, seen in a loaded
// TestRealTrace). Each trace stages /w/d/stage/f, which the commit moves
// to /w/d/s/f: with a syncfs after all that, the audit must find the
// commit whole (CURRENT, manifest, f) however the lines interleave. A
// rename that may have ended after the syncfs began is not covered by
// it, even once a later call shows it had happened.
func TestInflight(t *testing.T) {
	const manifest = `{"tables": {"t": {"dir": "s", "partitions": {"": [{"name": "f"}]}}}}`
	const write = `2 pwrite64(5</w/d/stage/f>, "x", 1, 0) = 1
2 close(5</w/d/stage/f>) = 0
`
	const create = `2 openat(AT_FDCWD</w>, "d/stage/f", O_RDWR|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 5</w/d/stage/f>
`
	const inOrder = `1 mkdirat(AT_FDCWD</w>, "d", 0755) = 0
1 mkdirat(AT_FDCWD</w>, "d/stage", 0755) = 0
` + create + write
	const build = `1 mkdirat(AT_FDCWD</w>, "d/s", 0755) = 0
1 renameat(AT_FDCWD</w>, "d/stage/f", AT_FDCWD</w>, "d/s/f") = 0
`
	const rename = `2 renameat(AT_FDCWD</w>, "d/stage/f", AT_FDCWD</w>, "d/s/f" <unfinished ...>
`
	const sync = `1 openat(AT_FDCWD</w>, "d", O_RDONLY) = 6</w/d>
1 syncfs(6</w/d>) = 0
`
	head := fmt.Sprintf(`1 mkdirat(AT_FDCWD</w>, "d/manifests", 0755) = 0
1 openat(AT_FDCWD</w>, "d/m", O_RDWR|O_CREAT|O_EXCL, 0666) = 3</w/d/m>
1 write(3</w/d/m>, %s, %d) = %[2]d
1 renameat(AT_FDCWD</w>, "d/m", AT_FDCWD</w>, "d/manifests/000000000001.json") = 0
1 openat(AT_FDCWD</w>, "d/c", O_RDWR|O_CREAT|O_EXCL, 0666) = 4</w/d/c>
1 write(4</w/d/c>, "000000000001.json\n", 18) = 18
`, strconv.Quote(manifest), len(manifest))
	const current = `1 renameat(AT_FDCWD</w>, "d/c", AT_FDCWD</w>, "d/CURRENT") = 0
1 fsync(6</w/d>) = 0
1 exit_group(0) = ?
`
	tests := []struct {
		name, stage string
		commit      string // the commit up to its syncfs ("": build, head, sync)
		late        string // the line that ends the rename of f, if it is not durable at the commit
	}{
		{"in order", inOrder, "", ""},
		{"a file made in a folder whose mkdir is unfinished", `1 mkdirat(AT_FDCWD</w>, "d", 0755) = 0
1 mkdirat(AT_FDCWD</w>, "d/stage", 0755 <unfinished ...>
` + create + `1 <... mkdirat resumed>) = 0
` + write, "", ""},
		{"two mkdirs of the folder unfinished, the first to fail", `1 mkdirat(AT_FDCWD</w>, "d", 0755) = 0
1 mkdirat(AT_FDCWD</w>, "d/stage", 0755 <unfinished ...>
3 mkdirat(AT_FDCWD</w>, "d/stage", 0755 <unfinished ...>
` + create + `1 <... mkdirat resumed>) = -1 EEXIST (File exists)
3 <... mkdirat resumed>) = 0
` + write, "", ""},
		{"a folder and its parent made by unfinished mkdirs", `1 mkdirat(AT_FDCWD</w>, "d", 0755 <unfinished ...>
3 mkdirat(AT_FDCWD</w>, "d/stage", 0755 <unfinished ...>
` + create + `3 <... mkdirat resumed>) = 0
1 <... mkdirat resumed>) = 0
` + write, "", ""},
		{"a file made in a folder whose rename into place is unfinished", `1 mkdirat(AT_FDCWD</w>, "d", 0755) = 0
1 mkdirat(AT_FDCWD</w>, "d/.tmp-stage", 0755) = 0
1 renameat(AT_FDCWD</w>, "d/.tmp-stage", AT_FDCWD</w>, "d/stage" <unfinished ...>
` + create + `1 <... renameat resumed>) = 0
` + write, "", ""},
		{"a folder made anew while its removal is unfinished", `1 mkdirat(AT_FDCWD</w>, "d", 0755) = 0
1 mkdirat(AT_FDCWD</w>, "d/stage", 0755) = 0
1 unlinkat(AT_FDCWD</w>, "d/stage", AT_REMOVEDIR <unfinished ...>
2 mkdirat(AT_FDCWD</w>, "d/stage", 0755) = 0
` + create + `1 <... unlinkat resumed>) = 0
` + write, "", ""},
		{"the rename into place unfinished as the syncfs starts", inOrder, `1 mkdirat(AT_FDCWD</w>, "d/s", 0755) = 0
` + head + rename + sync + `2 <... renameat resumed>) = 0
`, "2 <... renameat resumed>"},
		{"the rename into place unfinished as the syncfs starts, then shown done", inOrder, `1 mkdirat(AT_FDCWD</w>, "d/s", 0755) = 0
` + head + rename + `1 openat(AT_FDCWD</w>, "d", O_RDONLY) = 6</w/d>
1 syncfs(6</w/d> <unfinished ...>
3 openat(AT_FDCWD</w>, "d/s/f", O_RDONLY|O_CLOEXEC) = 7</w/d/s/f>
2 <... renameat resumed>) = 0
1 <... syncfs resumed>) = 0
`, "3 openat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			commit := tt.commit
			if commit == "" {
				commit = build + head + sync
			}
			trace := tt.stage + commit + current
			rep, err := Audit(strings.NewReader(trace), Config{Cwd: "/w", Datasets: []string{"/w/d"}})
			if err != nil {
				t.Fatal(err)
			}
			if tt.late == "" {
				if len(rep.Violations) != 0 || rep.Held != 3 || rep.Commits != 1 {
					t.Errorf("%d commits, %d files held, violations %v; want 1, 3 (CURRENT, manifest, f), none", rep.Commits, rep.Held, rep.Violations)
				}
				return
			}
			line := strings.Count(trace[:strings.Index(trace, "\n"+tt.late)+1], "\n") + 1
			want := fmt.Sprintf("its entry f in /w/d/s (renameat at line %d) is not durable", line)
			if len(rep.Violations) == 0 || !strings.Contains(rep.Violations[0].What, want) || rep.Violations[0].Path != "/w/d/s/f" {
				t.Errorf("violations %v; want first: /w/d/s/f ... %s", rep.Violations, want)
			}
		})
	}
}
