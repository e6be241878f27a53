package app

import (
	"fmt"
	"path/filepath"
	"strings"
)

// extFormats maps an output file's extension to the export format it
// names, for export's --format when it is not given; extNames lists
// them in the order export's errors show them.
var (
	extFormats = map[string]string{
		".parquet": "parquet",
		".csv":     "csv",
		".jsonl":   "jsonl",
		".ndjson":  "jsonl",
		".arrow":   "arrow",
		".arrows":  "arrow",
	}
	extNames = []string{".parquet", ".csv", ".jsonl", ".ndjson", ".arrow", ".arrows"}
)

// formatForOutput returns the export format that output's extension names
// (case-insensitive), or "" for stdout and a name without an extension
// (a device such as /dev/stdout, a dot file such as .x). An extension
// that names no format is an error: export wrote Parquet under any name
// (out.csv.gz, out.xyz) without a word.
func formatForOutput(output string) (string, error) {
	base := filepath.Base(output)
	ext := filepath.Ext(base)
	if output == "-" || ext == "" || ext == base {
		return "", nil
	}
	if f, ok := extFormats[strings.ToLower(ext)]; ok {
		return f, nil
	}
	return "", fmt.Errorf("-o %s: unknown extension %q (known: %s); give --format", output, ext, strings.Join(extNames, " "))
}

// terminalHint ends, for a command, the error that refuses to write
// Parquet or Arrow to a terminal: export writes Parquet to stdout by
// default, so one who runs it bare to look at a table is told the text
// formats too.
var terminalHint = map[string]string{"export": ", or give --format csv, jsonl or magnet to read it here"}
