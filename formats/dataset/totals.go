package dataset

import "strings"

// A TotalFamily is one cumulative count kept in Manifest.Totals, or a
// family of them told apart by one label (Label set: the key is
// Name:value, see TotalKey). status --metrics-file writes each as the
// Prometheus counter infohash_dataset_NAME_total (not infohash_NAME_total:
// OpenMetrics names a counter's family without _total, which would be
// the name of a stage's gauge of its last run, infohash_dedup_inputs...).
type TotalFamily struct {
	Name  string
	Label string // "" for a single count
	Help  string
}

// Totals that the stages' commits add to (Tx.AddTotal).
const (
	TotalDedupInputs       = "dedup_inputs"
	TotalDedupObservations = "dedup_observations"
	TotalDedupNew          = "dedup_new_hashes"
	TotalDedupReactivated  = "dedup_reactivated"
	TotalDedupRewarmed     = "dedup_rewarmed"
	TotalPlanJobs          = "plan_jobs"
	TotalPlanNewOverdue    = "plan_jobs_new_overdue"
	TotalMergeInputs       = "merge_inputs"
	TotalMergeResults      = "merge_results"
	TotalMergeAttempts     = "merge_attempts"
	TotalMergeTorrents     = "merge_torrents"
	TotalMergeUnknown      = "merge_unknown_hashes"
	TotalMergeArchived     = "merge_archived_to_cold"
	TotalMergeDeferred     = "merge_failures_deferred"
)

// TotalFamilies are every total this build keeps, in the order status
// writes them.
var TotalFamilies = []TotalFamily{
	{TotalDedupInputs, "", "Inputs dedup applied (each once: the ledger skips one applied before)."},
	{TotalDedupObservations, "", "Observations dedup applied."},
	{TotalDedupNew, "", "Hashes dedup added to the state (first seen)."},
	{TotalDedupReactivated, "", "Sightings that pulled a hash's next retry closer (reactivated_at set)."},
	{TotalDedupRewarmed, "", "Cold hashes a sighting made hot again."},
	{TotalPlanJobs, "kind", "Jobs plan-retries leased, by kind (new: never tried; retry; reactivated: a retry a sighting pulled closer; cold: from the cold sweep)."},
	{TotalPlanNewOverdue, "", "Jobs plan-retries leased by the overdue reserve (plan.new_overdue_share): never-tried hashes due longer than plan.new_overdue_after; also counted in plan_jobs, kind new."},
	{TotalMergeInputs, "", "Results inputs merge applied."},
	{TotalMergeResults, "", "Result rows merge applied (attempts and released rows)."},
	{TotalMergeAttempts, "outcome", "Fetch attempts merge applied, by outcome (released rows are no attempt and are not counted)."},
	{TotalMergeTorrents, "", "Torrents (verified metadata) merge stored."},
	{TotalMergeUnknown, "", "Hashes a result named that the state did not know, added by merge."},
	{TotalMergeArchived, "", "Hashes merge moved to the cold tier."},
	{TotalMergeDeferred, "", "peers_penalised results merge applied (its failures_deferred): a hash's retry deferred to the end of a peer's penalty, no attempt counted."},
}

// TotalKey is the Totals key of value of family name's label.
func TotalKey(name, value string) string { return name + ":" + value }

// SplitTotalKey splits a Totals key into its family's name and its label
// value ("" for a single count).
func SplitTotalKey(key string) (name, value string) {
	name, value, _ = strings.Cut(key, ":")
	return name, value
}
