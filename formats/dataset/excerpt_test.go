package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestDamageErrorsQuoteAShortPrefix: a file of the dataset overwritten
// with something big (an export written to DIR/CURRENT) is reported in one
// short line that quotes at most a short prefix of what is there, not the
// whole file.
func TestDamageErrorsQuoteAShortPrefix(t *testing.T) {
	var csv strings.Builder
	csv.WriteString("info_hash,info_hash_v2,first_seen\n")
	for i := range 300 {
		fmt.Fprintf(&csv, "%040x,,2024-01-01T00:00:00Z\n", i)
	}
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name    string
		file    string // dataset-relative; "" is the live manifest
		content func(old []byte) string
		want    string
	}{
		{"csv over CURRENT", "CURRENT", func([]byte) string { return csv.String() }, `corrupt pointer "info_hash,info_hash_v2`},
		{"long name in CURRENT", "CURRENT", func([]byte) string { return long + ".json\n" }, `corrupt pointer "xxxx`},
		{"binary in CURRENT", "CURRENT", func([]byte) string { return "PAR1\x00\x01\x02" + long }, `corrupt pointer "PAR1\x00`},
		{"long table name", "", func(b []byte) string {
			return strings.Replace(string(b), `"state": {`, `"`+long+`": {`, 1)
		}, `unknown table "xxxx`},
		{"long unknown field", "", func(b []byte) string {
			return strings.Replace(string(b), `{`, `{"`+long+`": 1, `, 1)
		}, `corrupt manifest: json: unknown field "xxxx`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openNew(t)
			m := commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}})
			p := filepath.Join(d.Dir, c.file)
			if c.file == "" {
				p = filepath.Join(d.Dir, "manifests", manifestName(m.Snapshot))
			}
			old, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c.content(old)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = d.Current()
			if err == nil {
				t.Fatal("damage accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not say %s", msg, c.want)
			}
			if strings.ContainsAny(msg, "\n\r") || len(msg) > len(d.Dir)+200 {
				t.Errorf("error of %d bytes, or not on one line: %q", len(msg), msg)
			}
		})
	}
}
