package fetch

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/infohash/infohash/formats/schema"
)

// TestDetailIsUTF8: a result's detail, a STRING column, may quote what a
// peer sent (an error text of a decoder); bytes that are not UTF-8 are
// escaped, so that DuckDB reads the results file.
func TestDetailIsUTF8(t *testing.T) {
	f := newFetcher(t, testOptions())
	a := newAttempt(f, schema.Job{InfoHash: schema.Hash{0x73}, HashType: schema.HashV1})
	a.outcomes = []peerOutcome{{Addr: "127.0.0.1:1", At: time.Now(),
		Err: failf(schema.OutcomeInvalidMetadata, "peer sent key \xff\xfe")}}
	var res schema.Result
	a.fill(&res)
	want := `127.0.0.1:1: peer sent key \xff\xfe`
	if res.Outcome != schema.OutcomeInvalidMetadata || res.Detail != want || !utf8.ValidString(res.Detail) {
		t.Fatalf("outcome %s, detail %q; want %s, %q", res.Outcome, res.Detail, schema.OutcomeInvalidMetadata, want)
	}
}
