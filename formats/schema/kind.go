package schema

import "slices"

// kinds are the kinds of file KindOfColumns tells apart, each by columns
// that together only it has of the files infohash writes (its test holds
// each to every schema): a state and an exported catalog share
// metadata_status, jobs and leases reason, torrents and a catalog
// fetched_at, a result and a torrent its metadata. The names are export's
// --table names, and "observations", "jobs" and "results" for the stages'
// files.
var kinds = []struct {
	kind string
	cols []string
}{
	{"observations", []string{"observed_at"}},
	{"jobs", []string{"reason", "peers"}},
	{"results", []string{"outcome"}},
	{"state", []string{"metadata_status", "lease_id"}},
	{"torrents", []string{"fetched_at", "info_bytes"}},
	{"catalog", []string{"metadata_status", "name"}},
	{"leases", []string{"reason", "planned_at"}},
	{"peers", []string{"addr", "until"}},
	{"ledger", []string{"id", "applied_at"}},
}

// KindOfColumns guesses which of infohash's files a file with these
// top-level columns is, from columns only that kind has (kinds):
// "observations", "jobs", "results", "state", "torrents", "catalog",
// "leases", "peers" or "ledger"; "" if none. It is for messages about a
// file given to the wrong stage. An exported catalog used to be called
// "state", and the leases table "jobs".
func KindOfColumns(cols []string) string {
	for _, k := range kinds {
		if hasAll(cols, k.cols) {
			return k.kind
		}
	}
	return ""
}

// hasAll reports whether cols holds every one of want.
func hasAll(cols, want []string) bool {
	for _, w := range want {
		if !slices.Contains(cols, w) {
			return false
		}
	}
	return true
}
