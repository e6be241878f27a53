package merge

import "github.com/infohash/infohash/formats/dataset"

// addTotals adds a try's work to the dataset's totals (published with its
// commit, or not at all).
func addTotals(tx *dataset.Tx, inputs int, st *Stats) {
	tx.AddTotal(dataset.TotalMergeInputs, int64(inputs))
	tx.AddTotal(dataset.TotalMergeResults, st.Results)
	for outcome, n := range st.attempts {
		tx.AddTotal(dataset.TotalKey(dataset.TotalMergeAttempts, outcome), n)
	}
	tx.AddTotal(dataset.TotalMergeTorrents, st.Torrents)
	tx.AddTotal(dataset.TotalMergeUnknown, st.UnknownHashes)
	tx.AddTotal(dataset.TotalMergeArchived, st.Archived)
	tx.AddTotal(dataset.TotalMergeDeferred, st.Deferred)
}
