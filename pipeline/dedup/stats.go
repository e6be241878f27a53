package dedup

// Stats are dedup's counters.
type Stats struct {
	Inputs        int `json:"inputs"`
	InputsSkipped int `json:"inputs_already_applied"`
	// InputsBusy counts the files named as INPUT (or in a folder) left
	// out as still being written (exit 3): not in Inputs. Absent from
	// --stats-json when 0, so a run that skipped none reports as before.
	InputsBusy   int   `json:"inputs_skipped_busy,omitempty"`
	Observations int64 `json:"observations_read"`
	// FutureClamped counts observations dated more than FutureSkew after
	// the run's clock, read as dated at it.
	FutureClamped int64 `json:"observations_future_clamped"`
	// BadPeerPorts counts the announce_peer rows read without their
	// endpoint because peer_port was no port (badports.go); only read
	// with --announced-peers (Options.AnnouncedPeers).
	BadPeerPorts    int64   `json:"bad_peer_ports"`
	InBatchDups     int64   `json:"in_batch_duplicates"`
	Distinct        int64   `json:"distinct_in_batch"`
	BloomNegatives  int64   `json:"bloom_negatives"`
	BloomPositives  int64   `json:"bloom_positives"`
	ConfirmedKnown  int64   `json:"confirmed_known"`
	FalsePositives  int64   `json:"false_positives"`
	New             int64   `json:"new"`
	Reactivated     int64   `json:"reactivated"` // next_retry pulled closer (reactivated_at set)
	Rewarmed        int64   `json:"rewarmed"`    // cold made hot, pulled or not (one already due: only this)
	StateRows       int64   `json:"state_rows"`
	Snapshot        int64   `json:"snapshot"`
	CommitConflicts int     `json:"commit_conflicts"`
	Commits         int     `json:"commits"`
	Seconds         float64 `json:"seconds"`
}
