package app

import (
	"path/filepath"
	"strings"
)

// extFormats maps an output file's extension to the export format it
// names, for export's --format when it is not given.
var extFormats = map[string]string{
	".parquet": "parquet",
	".csv":     "csv",
	".jsonl":   "jsonl",
	".ndjson":  "jsonl",
	".arrow":   "arrow",
	".arrows":  "arrow",
}

// formatForOutput returns the export format that output's extension names
// (case-insensitive), or "" for stdout and extensions that name none.
func formatForOutput(output string) string {
	if output == "-" {
		return ""
	}
	return extFormats[strings.ToLower(filepath.Ext(output))]
}
