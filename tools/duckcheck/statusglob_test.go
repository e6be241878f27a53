package duckcheck

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusReadsRun: the DuckDB and frozen lines infohash status prints,
// and the globs of its --format json, read the dataset's state and no
// other, beside a folder that an unescaped glob of DIR would match too,
// for a DIR whose name holds glob characters, a quote or a backslash.
// DuckDB splits a pattern at a backslash as at a slash, and nothing
// escapes one: for such a DIR the lines read from DIR (the test runs them
// there) and say so; its JSON globs must then find nothing rather than
// another dataset's files.
func TestStatusReadsRun(t *testing.T) {
	needCommands(t, "dedup", "status")
	for _, tt := range []struct{ name, folder, decoy string }{
		{"glob characters", "runs [1] a*b?", "runs 1 axbx"},
		{"a quote", "it's", "it''s"},
		{"a backslash", `a\b`, "a b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			data, decoy := filepath.Join(top, tt.folder), filepath.Join(top, tt.decoy)
			for i, dir := range []string{data, decoy} {
				list := filepath.Join(top, fmt.Sprintf("hashes-%d.txt", i))
				var b strings.Builder
				for j := range 2 + 3*i { // 2 hashes in DIR, 5 in the decoy
					fmt.Fprintf(&b, "%02x%038x\n", j, i)
				}
				if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				mustInfohash(t, "dedup", "--data", dir, list)
			}
			var reads []string
			fromDIR := false
			for _, line := range strings.Split(mustInfohash(t, "status", "--data", data), "\n") {
				for _, label := range []string{"DuckDB: ", "frozen: "} {
					if rest, ok := strings.CutPrefix(line, label); ok {
						i := strings.Index(rest, "read_parquet(")
						if i < 0 {
							t.Fatalf("status: %q reads nothing", line)
						}
						fromDIR = fromDIR || strings.HasPrefix(rest, "from DIR")
						reads = append(reads, rest[i:])
					}
				}
			}
			if len(reads) != 2 || fromDIR != strings.Contains(tt.folder, `\`) {
				t.Fatalf("status prints reads %q (from DIR: %v)", reads, fromDIR)
			}
			db := duck(t)
			if fromDIR {
				t.Chdir(data) // DuckDB resolves a relative pattern here
			}
			for _, rd := range reads {
				if n, err := count(db, rd); err != nil || n != 2 {
					t.Errorf("status's %s: %d rows, %v; want DIR's 2", rd, n, err)
				}
			}
			var js struct {
				State  string `json:"state_glob"`
				Frozen string `json:"frozen_state_glob"`
			}
			if err := json.Unmarshal([]byte(mustInfohash(t, "status", "--data", data, "--format", "json")), &js); err != nil {
				t.Fatal(err)
			}
			for _, g := range []string{js.State, js.Frozen} {
				n, err := count(db, "read_parquet("+Quote(g)+")")
				if fromDIR && err == nil || !fromDIR && (err != nil || n != 2) {
					t.Errorf("status --format json's glob %s: %d rows, %v; want DIR's 2 (none for a backslash)", g, n, err)
				}
			}
		})
	}
}

// count is the number of rows read.
func count(db *sql.DB, read string) (int64, error) {
	var n int64
	err := db.QueryRow("SELECT count(*) FROM " + read).Scan(&n)
	return n, err
}

// TestStatusReadsRunRelative: for a DIR given relative (--data rel/ds),
// status's DuckDB and frozen lines, and the globs of its --format json,
// read DIR's state from DuckDB started in another folder: they printed
// 'rel/ds/state/…', which DuckDB resolves against its own working
// directory, and read nothing there.
func TestStatusReadsRunRelative(t *testing.T) {
	needCommands(t, "dedup", "status")
	top := t.TempDir()
	list := filepath.Join(top, "hashes.txt")
	if err := os.WriteFile(list, []byte(fmt.Sprintf("%040x\n%040x\n", 1, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(top, "rel"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(top) // the binary runs here
	mustInfohash(t, "dedup", "--data", "rel/ds", list)
	var reads []string
	for _, line := range strings.Split(mustInfohash(t, "status", "--data", "rel/ds"), "\n") {
		for _, label := range []string{"DuckDB: ", "frozen: "} {
			if rest, ok := strings.CutPrefix(line, label); ok && strings.HasPrefix(rest, "read_parquet(") {
				reads = append(reads, rest)
			}
		}
	}
	if len(reads) != 2 {
		t.Fatalf("status prints reads %q, want a DuckDB and a frozen one", reads)
	}
	// The globs of --format json too: they were 'rel/ds/state/…'.
	var js struct {
		State  string `json:"state_glob"`
		Frozen string `json:"frozen_state_glob"`
	}
	if err := json.Unmarshal([]byte(mustInfohash(t, "status", "--data", "rel/ds", "--format", "json")), &js); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{js.State, js.Frozen} {
		reads = append(reads, "read_parquet("+Quote(g)+")")
	}
	t.Chdir(t.TempDir()) // DuckDB started elsewhere
	db := duck(t)
	for _, rd := range reads {
		if n, err := count(db, rd); err != nil || n != 2 {
			t.Errorf("status's %s from another folder: %d rows, %v; want DIR's 2", rd, n, err)
		}
	}
}
