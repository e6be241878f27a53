// Command duckq runs SQL statements on DuckDB and prints their results as
// tab-separated text, with the time each took on stderr. Benchmark
// scripts use it to time DuckDB on the same files as infohash.
//
//	duckq --threads 2 "SELECT count(*) FROM read_parquet('obs.parquet')"
//	duckq --threads 2 --memory-limit 2GB -f merge.sql
//	echo "SELECT 42" | duckq -f -
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/infohash/infohash/tools/duckcheck"
)

func main() {
	err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "duckq: %v\n", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("duckq", flag.ContinueOnError)
	fs.SetOutput(stderr)
	threads := fs.Int("threads", 0, "DuckDB threads (0 = its default)")
	memory := fs.String("memory-limit", "", `DuckDB memory_limit, e.g. "2GB" (default: DuckDB's)`)
	dbPath := fs.String("db", "", "database file (default: in memory)")
	file := fs.String("f", "", `read statements from this file ("-" = stdin), separated by lines ending in ";"`)
	header := fs.Bool("header", true, "print the column names before each result")
	timings := fs.Bool("timings", true, "print each statement's time and the total on stderr (make demo turns them off)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: duckq [flags] SQL... | duckq [flags] -f FILE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	stmts := fs.Args()
	if *file != "" {
		b, err := readFile(*file, stdin)
		if err != nil {
			return err
		}
		stmts = append(stmts, splitStatements(string(b))...)
	}
	if len(stmts) == 0 {
		fs.Usage()
		return fmt.Errorf("%w: no SQL given", errUsage)
	}
	db, err := duckcheck.Open(*dbPath, *threads, *memory)
	if err != nil {
		return err
	}
	defer db.Close()
	var total time.Duration
	for _, s := range stmts {
		began := time.Now()
		cols, rows, err := duckcheck.Rows(db, s)
		el := time.Since(began)
		total += el
		if err != nil {
			return fmt.Errorf("%s: %w", clip(s), err)
		}
		if *header {
			fmt.Fprintln(stdout, strings.Join(cols, "\t"))
		}
		for _, r := range rows {
			fmt.Fprintln(stdout, strings.Join(r, "\t"))
		}
		if *timings {
			fmt.Fprintf(stderr, "duckq: %.3fs %s\n", el.Seconds(), clip(s))
		}
	}
	if *timings {
		fmt.Fprintf(stderr, "duckq: total %.3fs\n", total.Seconds())
	}
	return nil
}

func readFile(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

// splitStatements cuts a script at lines that end in ";" (enough for the
// scripts benchmarks write; a ";" inside a string at a line end would
// split it). Blank results and "--" comment lines are dropped.
func splitStatements(script string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			if s := strings.TrimSpace(cur.String()); s != ";" {
				out = append(out, s)
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// clip shortens a statement to one line for logs.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}
