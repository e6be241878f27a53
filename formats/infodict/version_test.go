package infodict

import (
	"errors"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestParseAs: an info dictionary must be of the version of the hash
// it matched: meta version 2 and a file tree for v2 (BEP 52), a length
// or files for v1; a hybrid one is both. Parse takes all of them (a meta
// version above 2, or no integer, it refuses: TestParseStrict).
func TestParseAs(t *testing.T) {
	var (
		v1     = "d6:lengthi100e4:name5:a.txt12:piece lengthi16384e6:pieces20:AAAAAAAAAAAAAAAAAAAAe"
		v2     = "d9:file treed1:ad0:d6:lengthi5e11:pieces root32:" + root32 + "eee12:meta versioni2e4:name1:x12:piece lengthi16384ee"
		hybrid = "d9:file treed1:ad0:d6:lengthi5e11:pieces root32:" + root32 + "eee6:lengthi5e12:meta versioni2e4:name1:a12:piece lengthi16384e6:pieces20:AAAAAAAAAAAAAAAAAAAAe"
		v1Ver1 = "d6:lengthi100e12:meta versioni1e4:name5:a.txt12:piece lengthi16384ee"
		v1Ver0 = "d6:lengthi100e12:meta versioni0e4:name5:a.txt12:piece lengthi16384ee"
	)
	for _, tt := range []struct {
		name    string
		info    string
		typ     int8
		version bool // fails as ErrVersion
	}{
		{"v1 as v1", v1, schema.HashV1, false},
		{"v1 as v2: no meta version", v1, schema.HashV2, true},
		{"v2 as v2", v2, schema.HashV2, false},
		{"v2 as v1: no length or files", v2, schema.HashV1, true},
		{"hybrid as v1", hybrid, schema.HashV1, false},
		{"hybrid as v2", hybrid, schema.HashV2, false},
		{"meta version 1 as v1", v1Ver1, schema.HashV1, false},
		{"meta version 1 as v2", v1Ver1, schema.HashV2, true},
		{"meta version 0 as v1", v1Ver0, schema.HashV1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.info)); err != nil {
				t.Fatalf("Parse: %v, want it taken (it checks no version)", err)
			}
			m, err := ParseAs([]byte(tt.info), tt.typ)
			if got := errors.Is(err, ErrVersion); got != tt.version || (err != nil) != tt.version {
				t.Fatalf("ParseAs: %v; want a version error: %v", err, tt.version)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
			if err == nil && (m.FileCount == nil || *m.FileCount != 1 || len(m.InfoBytes) != len(tt.info)) {
				t.Errorf("metadata %+v, want one file and the info bytes", m)
			}
		})
	}
	// Whatever else is wrong is Parse's error, not a version's: no files,
	// meta version 2 without a file tree dictionary, or one without it
	// (neither v1 nor v2, whichever hash: strict.go).
	for _, info := range []string{
		"d4:name1:xe",
		"d6:lengthi1e12:meta versioni2e4:name1:x12:piece lengthi16384ee",
		"d9:file treeli1ee6:lengthi1e12:meta versioni2e4:name1:x12:piece lengthi16384ee",
		"d9:file treed1:ad0:d6:lengthi5e11:pieces root32:" + root32 + "eee4:name1:x12:piece lengthi16384ee",
	} {
		for _, typ := range []int8{schema.HashV1, schema.HashV2} {
			if _, err := ParseAs([]byte(info), typ); !errors.Is(err, ErrInvalid) || errors.Is(err, ErrVersion) {
				t.Errorf("%q as %d: %v, want Parse's error", info, typ, err)
			}
		}
	}
}
