package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/infohash/infohash/pipeline/export"
)

// TestExportDescribe: export --describe TABLE prints export.Describe's
// columns of TABLE with no dataset (exit 0), and refuses an unknown
// table and export's other flags (exit 2, naming them).
func TestExportDescribe(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		code    int
		stdout  string // the table described ("" for none)
		inError string
	}{
		{"a table", []string{"--describe", "torrents"}, 0, "torrents", ""},
		{"all", []string{"--describe", "all"}, 0, "all", ""},
		{"with --data", []string{"--data", "/nonexistent", "--describe", "ledger"}, 0, "ledger", ""},
		{"unknown table", []string{"--describe", "states"}, 2, "", `--describe "states": want one of state, torrents`},
		{"with -o", []string{"--describe", "state", "-o", "x.csv"}, 2, "", "-o does not apply"},
		{"with --table", []string{"--describe", "state", "--table", "torrents"}, 2, "", "--table does not apply"},
		{"an argument", []string{"--describe", "state", "torrents"}, 2, "", `unexpected argument "torrents"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"infohash", "export"}, tt.args...), strings.NewReader(""), &out, &errb)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errb.String())
			}
			var want bytes.Buffer
			if tt.stdout != "" {
				if err := export.Describe(&want, tt.stdout); err != nil {
					t.Fatal(err)
				}
			}
			if out.String() != want.String() {
				t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want.String())
			}
			if !strings.Contains(errb.String(), tt.inError) {
				t.Errorf("stderr %q lacks %q", errb.String(), tt.inError)
			}
		})
	}
}
