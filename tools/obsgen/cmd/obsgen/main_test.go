package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	out, txt, gt := filepath.Join(dir, "o.parquet"), filepath.Join(dir, "h.txt"), filepath.Join(dir, "t.json")
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"--rows", "5k", "--distinct", "10%", "--seed", "7",
		"-o", out, "--text", txt, "--text-format", "mixed", "--ground-truth", gt}, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "5000 rows, 500 distinct") {
		t.Errorf("summary: %q", stderr.String())
	}
	b, err := os.ReadFile(gt)
	if err != nil {
		t.Fatal(err)
	}
	var truth struct{ Rows, Distinct int64 }
	if err := json.Unmarshal(b, &truth); err != nil || truth.Rows != 5000 || truth.Distinct != 500 {
		t.Fatalf("ground truth %s (%v)", b, err)
	}
	if lines := bytes.Count(must(os.ReadFile(txt)), []byte("\n")); lines != 5000 {
		t.Fatalf("%d text lines, want 5000", lines)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("parquet output: %v", err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestRunUsage(t *testing.T) {
	o := filepath.Join(t.TempDir(), "o.parquet")
	tests := map[string][]string{
		"nothing to do":  {"--rows", "10"},
		"bad rows":       {"--rows", "ten", "-o", o},
		"bad distinct":   {"--distinct", "200%", "-o", o},
		"bad style":      {"--style", "csv", "-o", o},
		"bad text kind":  {"--text-format", "json", "--text", o},
		"bad start":      {"--start", "yesterday", "-o", o},
		"unknown flag":   {"--frobnicate", "-o", o},
		"distinct>rows":  {"--rows", "10", "--distinct", "11", "-o", o},
		"bad known":      {"--known", "-3", "-o", o},
		"zipf s too low": {"--zipf-s", "0.5", "-o", o},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), args, &stderr)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, errUsage) {
				t.Fatalf("not a usage error: %v", err)
			}
			if _, serr := os.Stat(o); serr == nil {
				t.Fatal("wrote output despite the error")
			}
		})
	}
}
