package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.parquet")
	script := "-- make a file\nCOPY (SELECT range AS i, 'a;b' AS s FROM range(10)) TO '" + out + "' (FORMAT parquet);\n" +
		"SELECT sum(i) AS total,\n  count(*) AS n FROM read_parquet('" + out + "');\n"
	var stdout, stderr bytes.Buffer
	err := run([]string{"--threads", "2", "-f", "-", "SELECT 'x'::BLOB AS b, NULL AS z"},
		strings.NewReader(script), &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	want := "b\tz\n78\tNULL\nCount\n10\ntotal\tn\n45\t10\n"
	if stdout.String() != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", stdout.String(), want)
	}
	if c := strings.Count(stderr.String(), "duckq: "); c != 4 {
		t.Fatalf("want 3 timings and a total on stderr, got:\n%s", stderr.String())
	}
}

// TestRunNoTimings: -timings=false leaves stderr empty, so that make
// demo prints the query results alone.
func TestRunNoTimings(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-timings=false", "SELECT 1 AS one"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if got, want := stdout.String(), "one\n1\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}
}

func TestRunErrors(t *testing.T) {
	tests := map[string]struct {
		args  []string
		usage bool
	}{
		"no sql":       {nil, true},
		"unknown flag": {[]string{"--nope", "SELECT 1"}, true},
		"bad sql":      {[]string{"SELEC 1"}, false},
		"missing file": {[]string{"-f", filepath.Join(t.TempDir(), "none.sql")}, false},
		"bad memory":   {[]string{"--memory-limit", "lots", "SELECT 1"}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(tc.args, strings.NewReader(""), &stdout, &stderr)
			if err == nil {
				t.Fatal("accepted")
			}
			if errors.Is(err, errUsage) != tc.usage {
				t.Fatalf("usage error %v, want %v: %v", errors.Is(err, errUsage), tc.usage, err)
			}
		})
	}
}

func TestSplitStatements(t *testing.T) {
	tests := map[string][]string{
		"":                           nil,
		"SELECT 1":                   {"SELECT 1"},
		"SELECT 1;\nSELECT 2;\n":     {"SELECT 1;", "SELECT 2;"},
		"-- c\nSELECT\n 1;\n;\n":     {"SELECT\n 1;"},
		"SELECT 'a;' ||\n'b';\nX":    {"SELECT 'a;' ||\n'b';", "X"},
		"  \n\t\n":                   nil,
		"SELECT 1; SELECT 2;\n":      {"SELECT 1; SELECT 2;"},
		"SELECT 1;\n-- end comment;": {"SELECT 1;"},
	}
	for in, want := range tests {
		if got := splitStatements(in); !slices.Equal(got, want) {
			t.Errorf("splitStatements(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSplitStatements(f *testing.F) {
	for _, s := range []string{"SELECT 1;\nSELECT 2;", "-- x\n;", "a\n;\n;b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, st := range splitStatements(s) {
			if strings.TrimSpace(st) == "" || strings.TrimSpace(st) == ";" {
				t.Fatalf("empty statement from %q", s)
			}
		}
	})
}
