package status

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// TestPrintSingular: a count of 1 in status's text takes the singular
// ("1 input applied", "table ledger  1 row"), any other the plural; it
// said "1 inputs applied" and "1 rows".
func TestPrintSingular(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int64
		want []string // regular expressions the text matches
	}{
		{"one", 1, []string{`, 1 input applied\)`, `table ledger +1 row,`, `\(1 row\) applied at`,
			`totals +1 observation, 1 new hash, 1 job planned \(1 for overdue new hashes\), 1 attempt merged \(1 torrent stored, 1 retry deferred`}},
		{"two", 2, []string{`, 2 inputs applied\)`, `table ledger +2 rows,`, `\(2 rows\) applied at`,
			`totals +2 observations, 2 new hashes, 2 jobs planned \(2 for overdue new hashes\), 2 attempts merged \(2 torrents stored, 2 retries deferred`}},
		{"none", 0, []string{`, 0 inputs applied\)`, `table ledger +0 rows,`, `\(0 rows\) applied at`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{InputsLedger: tt.n, TableRows: map[string]int64{"ledger": tt.n}, TableBytes: map[string]int64{"ledger": 100},
				LastInput: &dataset.Applied{Name: "list.txt", Rows: tt.n, At: time.Unix(0, 0)}}
			if tt.n > 0 {
				r.Totals = map[string]int64{dataset.TotalDedupObservations: tt.n, dataset.TotalDedupNew: tt.n,
					dataset.TotalKey(dataset.TotalPlanJobs, "new"): tt.n, dataset.TotalPlanNewOverdue: tt.n,
					dataset.TotalKey(dataset.TotalMergeAttempts, "ok"): tt.n, dataset.TotalMergeTorrents: tt.n, dataset.TotalMergeDeferred: tt.n}
			}
			var b strings.Builder
			r.Print(&b)
			for _, re := range tt.want {
				if !regexp.MustCompile(re).MatchString(b.String()) {
					t.Errorf("status text does not match %s:\n%s", re, b.String())
				}
			}
		})
	}
}

// TestPrintVerifyProblemsSingular: --verify's line for damaged files
// takes the verb's singular for one file ("1 does not match"), the plural
// otherwise; it said "1 do not match".
func TestPrintVerifyProblemsSingular(t *testing.T) {
	for _, tt := range []struct {
		name     string
		problems int
		want     string
	}{
		{"one", 1, "verified 3 files (300 B) against the manifest: 1 does not match (not counted further)\n"},
		{"two", 2, "verified 3 files (300 B) against the manifest: 2 do not match (not counted further)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := &dataset.VerifyResult{Files: 3, Bytes: 300}
			for range tt.problems {
				v.Problems = append(v.Problems, dataset.Problem{Table: "state", Path: "x", What: "missing"})
			}
			r := &Report{Verified: v}
			var b strings.Builder
			r.Print(&b)
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("status text lacks %q:\n%s", tt.want, b.String())
			}
		})
	}
}
