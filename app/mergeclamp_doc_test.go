package app

import (
	"os"
	"strings"
	"testing"
)

// TestMergeClampDoc: README's merge paragraph and merge --help both name
// every time merge reads as its clock when over 5 minutes ahead
// (attempted_at, a peer_failures at, an ok's end: its fetched_at;
// pipeline/merge/future.go) and the retry_after it refuses, more than
// 100 years after attempted_at (pipeline/merge/checkresult.go). README
// named only attempted_at and at, and neither said the 100 years.
func TestMergeClampDoc(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	help := strings.Join(strings.Fields(helpOf(t, "merge")), " ")
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"README", readme, []string{
			"An `attempted_at`, `at` or an `ok`'s end (`fetched_at`) over 5 minutes ahead is read as the clock",
			"a `retry_after` over 100 years on",
		}},
		{"merge --help", help, []string{
			"an attempted_at, a peer_failures at or an ok's end (fetched_at) is read as the clock (5m)",
			"without retry_after, or with one more than 100 years after its attempted_at (no penalty lasts so long), is bad input",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, want := range tt.want {
				if !strings.Contains(tt.text, want) {
					t.Errorf("%s does not say %q", tt.name, want)
				}
			}
		})
	}
}
