// Package merge is the merge stage: it folds fetch results into the
// dataset in one commit, and unions another dataset into this one.
//
//	capture → dedup → plan-retries → fetch → merge → export
//
// A result counts once. It is applied only if its (info_hash, lease_id)
// still matches the hash's lease in DIR/leases/ (see package plan); the
// lease is then released. A late ok, after the lease moved on, is stored
// all the same (metadata is never thrown away); a late failure is ignored
// and counted. Each input is recorded by checksum in the manifest's
// ledger, so the same results applied twice change nothing.
//
// A released result (fetch gave the job back unattempted: see
// schema.OutcomeReleased) only removes its lease, when it still matches,
// and changes nothing else of the hash; it sorts after the attempts of
// its hash, so that an attempt under the same lease counts whatever the
// order of the rows.
//
// An ok result makes the hash fetched and its verified metadata goes to
// DIR/torrents/current/prefix=XX/: every metadata column decoded from its
// info_bytes (derive.go), not the columns of the results file. A failure goes through the retry policy
// (schedule.ApplyResultFailure); the endpoints that failed go to DIR/peers/
// (schedule.PenalizePeer; not one that only lacked the torrent,
// peer_lacks_torrent, a fact about that hash) and to the hash's
// avoid_peers, which, once a
// peer served the hash bad metadata or claimed it too large, hold those
// sources only, until the next success, however long ago their penalties
// ended: each distinct source counts once in bad_metadata. Hashes past
// the archive thresholds go to the cold tier as merge applies their
// partition. A partition whose files hold every hash its results name
// has its files spliced (splice.go: only the rows that change rewritten,
// an archived one left in its file with tier cold) while its hot
// files then hold at most a 64th of their rows cold (256 at least);
// otherwise it is rewritten whole: one hot file, and the cold rows moved
// to a cold-*.parquet file in the same partition. When a result touches
// a cold file, the partition's cold files are read as well (by either
// path), and the rows merge archives include their tier=hot rows; a
// spliced cold file stays a cold file, a row an ok result made hot in it
// included (plan-retries reads its tier).
//
// Merge holds the results it applies in memory, but not their metadata
// (megabytes a torrent): as each input is read, an ok result's metadata
// goes to a spill file in a folder of DIR/staging (metaSpill), and is
// read back a torrent at a time as the torrents files are written; the
// folder is removed before the commit (or by the next writer after a
// kill). A commit conflict reads the inputs again.
//
// With --from OTHER_DIR the other dataset is unioned in (see union.go for
// the rule of each column).
package merge
