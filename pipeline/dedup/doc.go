// Package dedup folds observations into the dataset's durable state: one
// row per known infohash, partitioned by its first byte.
//
// The data flow of infohash:
//
//	capture → dedup → plan-retries → fetch → merge → export
//
// Dedup removes repeats in layers, each cheaper than the next (seed #17):
//
//  1. the recent set: observations of one run are aggregated per hash in
//     memory (in-batch duplicates never go further);
//  2. a Bloom filter per partition, persisted with the snapshot: a
//     negative means surely new, so a partition whose hashes are all new
//     gets a delta file without reading its existing files;
//  3. the exact store: a Bloom positive is always confirmed against the
//     partition's sorted Parquet files, and a false positive is a new
//     hash like any other. A cross-run hot cache does not pay in a batch
//     process (each run reads the partitions it must rewrite anyway).
//
// Known hashes get last_seen, seen_count and activity updated; a fresh
// observation of a failed, deferred (peers_penalised) or cold hash goes
// through schedule.Reactivate, the one rule the retry scheduler also uses
// (it pulls a dormant retry forward, and makes a cold hash hot), with the
// newest announce_peer among them, which it weighs apart (the aggregate
// keeps its time when the state has rows: aggann.go). The reactivated counter counts the
// hashes whose retry it pulled forward; rewarmed, the cold ones it made hot.
package dedup
