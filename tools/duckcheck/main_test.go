package duckcheck

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/obsgen"
)

// infohashBin is the binary under test: $INFOHASH_BIN, or built from the
// repository once in TestMain.
var infohashBin string

// missing holds, per subcommand, why it cannot be tested ("" = available).
var missing = map[string]string{}

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if q := os.Getenv(stdinQueryEnv); q != "" {
		return stdinQuery(q) // a child run by queryStdin
	}
	infohashBin = os.Getenv("INFOHASH_BIN")
	if infohashBin == "" {
		dir, err := os.MkdirTemp("", "duckcheck-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		infohashBin = filepath.Join(dir, "infohash")
		cmd := exec.Command("go", "build", "-o", infohashBin, "./cmd/infohash")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "duckcheck: building infohash: %v\n%s", err, out)
			return 1
		}
	} else if abs, err := filepath.Abs(infohashBin); err == nil {
		infohashBin = abs
	}
	for _, sub := range []string{"dedup", "export"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, infohashBin, sub, "--help").CombinedOutput()
		cancel()
		if err != nil {
			missing[sub] = fmt.Sprintf("`infohash %s` is not available yet (%s %s --help: %v: %.120q)",
				sub, infohashBin, sub, err, out)
		}
	}
	return m.Run()
}

// need skips the test when an infohash subcommand does not exist yet.
func need(t *testing.T, sub string) {
	t.Helper()
	if why := missing[sub]; why != "" {
		t.Skip(why)
	}
}

// infohash runs the binary and returns stdout, stderr and the exit code.
func infohash(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, infohashBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("infohash %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// mustInfohash runs the binary and fails the test unless it exits 0.
func mustInfohash(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := infohash(t, args...)
	if code != 0 {
		t.Fatalf("infohash %v: exit %d\nstderr: %s", args, code, stderr)
	}
	return stdout
}

// generate writes a generated observation file into dir and returns its
// path and ground truth.
func generate(t *testing.T, dir, name string, cfg obsgen.Config, style obsgen.Style) (string, obsgen.Truth) {
	t.Helper()
	path := filepath.Join(dir, name)
	tr, err := obsgen.WriteParquet(context.Background(), path, cfg, style)
	if err != nil {
		t.Fatal(err)
	}
	return path, tr
}

// config is a small generator configuration for tests.
func config(rows int64, mod func(*obsgen.Config)) obsgen.Config {
	c := obsgen.DefaultConfig()
	c.Rows = rows
	c.V2PerMille = 50 // enough v2 hashes to check at small sizes
	if mod != nil {
		mod(&c)
	}
	return c
}

// duck opens an in-memory DuckDB with two threads, closed with the test.
func duck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := Open("", 2, "1GB")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// scalar runs a query returning one value.
func scalar[T any](t *testing.T, db *sql.DB, query string) T {
	t.Helper()
	var v T
	if err := db.QueryRow(query).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}
