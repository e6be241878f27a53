// Package dataset is infohash's on-disk dataset: its layout, the manifest
// that is the one commit point, the writer lock, snapshots and migration.
//
// Layout of DIR:
//
//	CURRENT                    the commit point: names the latest manifest
//	LOCK                       flock(2) writer lock; holds host and PID
//	manifests/NNNNNNNNNNNN.json one manifest per snapshot
//	state/v/NNNNNNNNNNNN/prefix=XX/*.parquet    immutable snapshot dirs
//	state/current -> v/NNNNNNNNNNNN             what DuckDB globs
//	torrents/…, peers/…        further tables, same scheme
//	ledger/…                   the inputs applied (ledger.go)
//	bloom/…                    per-partition Bloom filters (inside snapshot dirs, _bloom/)
//	inbox/                     stdin spooled before it is applied
//	staging/                   files being built by running writers
//	policy.json, blocklist     scheduling policy (see pipeline/schedule)
//	input-cache                dedup's cache of input checksums: no data, only
//	                           saves re-reading inputs (pipeline/dedup)
//
// A snapshot directory is complete before it is published: the files a
// commit keeps are hard links to the previous snapshot's, under names of
// the new snapshot's (carriedName), so a file's content is never
// rewritten and no name is in two snapshot directories of a table. A
// commit writes the new manifest, renames CURRENT onto it (the atomic
// step), then points each table's current symlink at its new directory.
// What fails after the rename (its directory's fsync, a symlink) fails
// Commit with an *AfterCommitError: the snapshot is committed all the
// same. Readers inside infohash go through CURRENT; DuckDB through the
// symlink, listing its partitions one after the other: a listing that
// spans a commit names files that the new directory lacks, so the read
// fails with a missing file rather than return one snapshot's partitions
// beside another's (mixed or duplicated rows). For a frozen view, glob
// the versioned directory printed by `infohash status`.
//
// Every table of a committed snapshot has at least one file, so that each
// table's glob matches from the first commit on: an empty table holds
// one 0-row file with its schema (empty.go).
//
// A manifest is checked against its format's shape as it is read, and a
// commit checks the one it publishes the same way (manifestcheck.go): a
// manifest no writer leaves is a damaged dataset, not a smaller one.
package dataset
