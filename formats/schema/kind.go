package schema

import "slices"

// KindOfColumns guesses which of infohash's row types a file with these
// top-level columns holds, from a column only that type has:
// "observations", "jobs", "results", "state" or "torrents"; "" if none.
// It is for messages about a file given to the wrong stage.
func KindOfColumns(cols []string) string {
	for _, k := range []struct{ col, kind string }{
		{"outcome", "results"},
		{"metadata_status", "state"},
		{"reason", "jobs"},
		{"observed_at", "observations"},
		{"fetched_at", "torrents"},
	} {
		if slices.Contains(cols, k.col) {
			return k.kind
		}
	}
	return ""
}
