package merge

import "github.com/infohash/infohash/formats/schema"

// Stats are merge's counters.
type Stats struct {
	Inputs        int `json:"inputs"`
	InputsSkipped int `json:"inputs_already_applied"`
	// InputsBusy counts the files left out as still being written (exit
	// 3), as dedup's: not in Inputs; absent from --stats-json when 0.
	InputsBusy      int         `json:"inputs_skipped_busy,omitempty"`
	Results         int64       `json:"results"`
	FutureClamped   int64       `json:"results_future_clamped"` // results with a time past the clock (FutureSkew), read as dated at it
	Stored          int64       `json:"ok_stored"`
	LateStored      int64       `json:"late_ok_stored"`
	DuplicateOK     int64       `json:"ok_already_fetched"`
	Applied         int64       `json:"failures_applied"`
	Deferred        int64       `json:"failures_deferred"`    // peers_penalised rows: retry deferred to their penalty's end, no attempt counted
	Reactivated     int64       `json:"failures_reactivated"` // of those applied or deferred, hashes a sighting made while the job was out then reactivated (as dedup's rule)
	LateFailures    int64       `json:"late_failures_ignored"`
	StaleFailures   int64       `json:"stale_failures_ignored"`
	AfterFetched    int64       `json:"failures_after_fetch_ignored"`
	Released        int64       `json:"released_rows"`          // released rows (no attempt) that ended their lease
	StaleReleases   int64       `json:"stale_releases_ignored"` // released rows whose lease was not the hash's any more
	UnknownHashes   int64       `json:"unknown_hashes_added"`
	LeasesReleased  int         `json:"leases_released"`
	LeasesPruned    int         `json:"stale_leases_dropped"`
	PeerPenalties   int         `json:"peer_penalties"`
	PeersForgotten  int         `json:"peers_forgotten"`
	PeerRows        int         `json:"peer_rows"`
	Archived        int64       `json:"archived_to_cold"`
	ArchivedByDefer int64       `json:"archived_deferred"` // of those, failed hashes cold only as deferred (peers_penalised) while unseen for archive.unseen, short of archive.min_attempts
	Partitions      int         `json:"partitions_rewritten"`
	Spliced         int         `json:"partitions_spliced"` // of those, the ones whose hot files were spliced, not rewritten whole
	Torrents        int64       `json:"torrents_written"`
	PolicyHash      string      `json:"policy"`
	Snapshot        int64       `json:"snapshot"`
	CommitConflicts int         `json:"commit_conflicts"`
	Seconds         float64     `json:"seconds"`
	Union           *UnionStats `json:"union,omitempty"`
	// Committed: the run committed Snapshot, even if a later step failed (dataset.AfterCommitError).
	Committed bool `json:"-"`

	released []schema.Hash
	attempts map[string]int64 // by outcome, for the dataset's totals
}

func (st *Stats) add(o partOut, torrents int) {
	for k, n := range o.attempts {
		if st.attempts == nil {
			st.attempts = map[string]int64{}
		}
		st.attempts[k] += n
	}
	st.Stored += o.verdicts[stored]
	st.LateStored += o.verdicts[lateStored]
	st.DuplicateOK += o.verdicts[duplicateOK]
	st.Applied += o.verdicts[applied]
	st.Deferred += o.verdicts[deferred]
	st.Reactivated += o.reactivated
	st.LateFailures += o.verdicts[lateFailure]
	st.StaleFailures += o.verdicts[staleFailure]
	st.AfterFetched += o.verdicts[afterFetched]
	st.Released += o.verdicts[releasedLease]
	st.StaleReleases += o.verdicts[staleRelease]
	st.UnknownHashes += o.unknown
	st.Archived += o.archived
	st.ArchivedByDefer += o.archivedDeferred
	st.Partitions++
	if o.spliced {
		st.Spliced++
	}
	st.Torrents += int64(torrents)
	st.released = append(st.released, o.released...)
}
