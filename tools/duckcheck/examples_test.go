package duckcheck

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// duckdbCommand returns the SQL of the `duckdb -c "SQL"` example in text
// that mentions marker.
func duckdbCommand(t *testing.T, what, text, marker string) string {
	t.Helper()
	for _, m := range regexp.MustCompile(`duckdb -c "([^"]*)"`).FindAllStringSubmatch(text, -1) {
		if strings.Contains(m[1], marker) {
			return m[1]
		}
	}
	t.Fatalf("%s shows no `duckdb -c \"…%s…\"` example", what, marker)
	return ""
}

// stdinQueryEnv names the query a child of the test binary runs on its
// stdin (queryStdin), as `duckdb -c` in a shell pipeline would.
const stdinQueryEnv = "DUCKCHECK_STDIN_QUERY"

// stdinQuery runs query in this process, whose stdin is a pipe, and
// prints its rows (tab-separated cells, a line each); 1 on an error.
func stdinQuery(query string) int {
	db, err := Open("", 2, "1GB")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	_, rows, err := Rows(db, query)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, r := range rows {
		fmt.Println(strings.Join(r, "\t"))
	}
	return 0
}

// queryStdin runs `infohash export args -o - | DuckDB query`, the query
// reading '/dev/stdin' in a child of the test binary, both bounded by a
// minute (a reader left waiting on its input fails the test, not hangs
// it: DuckDB's sniffer on a FIFO did). It returns the query's rows as
// "cell\tcell" lines.
func queryStdin(t *testing.T, query string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	export := exec.CommandContext(ctx, infohashBin, append(append([]string{"export"}, args...), "-o", "-")...)
	duck := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	duck.Env = append(os.Environ(), stdinQueryEnv+"="+query)
	pipe, err := export.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	duck.Stdin = pipe
	var exportErr, out, duckErr strings.Builder
	export.Stderr, duck.Stdout, duck.Stderr = &exportErr, &out, &duckErr
	if err := export.Start(); err != nil {
		t.Fatal(err)
	}
	err = duck.Run()
	if werr := export.Wait(); werr != nil && err == nil {
		err = fmt.Errorf("infohash export %v: %v: %s", args, werr, exportErr.String())
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(duckErr.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// TestDocumentedExamplesRun: the DuckDB queries README's and --help's
// command examples show run as shown and count what they say.
//   - README's `export -f jsonl | duckdb -c "… read_ndjson('/dev/stdin', …)"`
//     counts the hashes by tier from a pipe, and so does --describe's
//     read_csv call on '/dev/stdin' from a csv pipe, which DuckDB's
//     sniffer cannot read (README: name every column).
//   - fetch --help's `duckdb -c "select outcome, count(*) from
//     'results.parquet' group by 1"` counts the outcomes of a fetch.
func TestDocumentedExamplesRun(t *testing.T) {
	needCommands(t, "dedup", "export", "fetch")
	needLoopback(t)
	dir := t.TempDir()
	data, list := filepath.Join(dir, "data"), filepath.Join(dir, "hashes.txt")
	var hashes strings.Builder
	for i := range 5 {
		fmt.Fprintf(&hashes, "%040x\n", i+7)
	}
	if err := os.WriteFile(list, []byte(hashes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "dedup", "--data", data, list)

	pipeQuery := duckdbCommand(t, "README", readRepoFile(t, "README.md"), "read_ndjson('/dev/stdin'")
	if got, err := queryStdin(t, pipeQuery, "--data", data, "-f", "jsonl"); err != nil || got != "hot\t5" {
		t.Errorf("README's export -f jsonl | %s, of 5 hot hashes: %q, %v", pipeQuery, got, err)
	}
	csvCall, _ := describeReaders(t, "state", "/dev/stdin")
	csvQuery := "SELECT tier, count(*) FROM " + csvCall + " GROUP BY 1"
	if got, err := queryStdin(t, csvQuery, "--data", data, "-f", "csv"); err != nil || got != "hot\t5" {
		t.Errorf("export -f csv | --describe's %.100s…, of 5 hot hashes: %q, %v", csvQuery, got, err)
	}

	help := mustInfohash(t, "fetch", "--help")
	fetchQuery := duckdbCommand(t, "fetch --help", help, "'results.parquet'")
	// A loopback port nothing listens on any more: every attempt fails
	// to connect, at once.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	mustInfohash(t, "fetch", list, "-o", filepath.Join(dir, "results.parquet"), "--no-dht", "--peer", closed,
		"--timeout", "20s")
	_, rows, err := Rows(duck(t), strings.Replace(fetchQuery, "'results.parquet'", Quote(filepath.Join(dir, "results.parquet")), 1))
	if err != nil {
		t.Errorf("fetch --help's %s: %v", fetchQuery, err)
	} else if got := fmt.Sprint(rows); got != "[[connect_failed 5]]" {
		t.Errorf("fetch --help's %s on 5 jobs whose one peer refuses: %s", fetchQuery, got)
	}
}
