package merge

import (
	"fmt"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/internal/exitcode"
)

// merge --from reads the other dataset's state and peers files within
// fixed bounds on their string values, as results' (fieldcap.go): a
// Parquet page from its header (rowio.Limits.MaxValueBytes), before it
// is read, then each row. That dataset may be crafted: without them a
// last_source or an endpoint could take up to rowio's 512 MiB page
// limit, and every row of a partition is held while it is unioned. The
// bounds are far above what the writers put there. Each file's row count
// is also checked against the other manifest's (its size and CRC-32C
// are, once read: dataset.Dataset.SourceFile), as the ledger's is.

// maxSourceBytes bounds last_source: dedup keeps an input's source of
// up to 256 bytes (its maxSourceLen); its own are a few words.
const maxSourceBytes = 256

// fromBound is the fixed bound of a value of the other dataset's state
// or peers column at the Parquet leaf path (0: none). The two tables
// share no column name but lease_id, which both bound alike.
func fromBound(path []string) int64 {
	switch leaf := path[len(path)-1]; {
	case len(path) == 1:
		switch leaf {
		case "info_hash_v2":
			return maxHashBytes
		case "last_source":
			return maxSourceBytes
		case "metadata_status", "last_failure", "tier", "class":
			return maxClassBytes
		case "lease_id":
			return maxLeaseIDBytes
		case "addr":
			return schema.MaxPeerAddrBytes
		}
	case len(path) == 3 && (path[0] == "avoid_peers" || path[0] == "peers"):
		return schema.MaxPeerAddrBytes
	}
	return 0
}

// fromLimits are the limits the other dataset's state and peers files
// are read within: rowio's defaults and fromBound.
func fromLimits() rowio.Limits {
	lim := rowio.DefaultLimits()
	lim.MaxValueBytes = fromBound
	return lim
}

// overBound is the error of row n (counted from 1) of the other
// dataset's file path whose column (of the row of hash h, if any) holds
// size bytes, over bound; the caller adds "merge --from: ".
func overBound(path string, n int64, h *schema.Hash, column string, size int, bound int64) error {
	what := ""
	if h != nil {
		what = schema.Hex(*h) + ": "
	}
	return exitcode.BadInput(fmt.Errorf("%s: row %d: %s%s of %d bytes, over its bound of %d bytes", path, n, what, column, size, bound))
}

// checkStateFields refuses row n of the other dataset's state file path
// when a string value is over its bound (fromBound), or a list holds more
// entries than any writer keeps: avoid_peers maxAvoid (16, since merge
// first wrote the column; a bad-metadata hash's sources too: addSources
// forgets the oldest past it), peers schema.MaxStatePeers (8, since format
// 6 added the column; older formats read it empty). Each list is unioned
// with this dataset's, and a hash this one lacks is added as it is: a
// crafted list of 200,000 entries took 133 s in unionAvoid's duplicate
// check, and one of 300 was committed as it was (a state file the
// writer's wrapped repetition levels then made unreadable).
func checkStateFields(path string, n int64, s *schema.State) error {
	over := func(column string, size int, bound int64) error {
		return overBound(path, n, &s.InfoHash, column, size, bound)
	}
	switch {
	case len(s.InfoHashV2) > maxHashBytes:
		return over("info_hash_v2", len(s.InfoHashV2), maxHashBytes)
	case len(s.LastSource) > maxSourceBytes:
		return over("last_source", len(s.LastSource), maxSourceBytes)
	case len(s.FirstSource) > maxSourceBytes:
		return over("first_source", len(s.FirstSource), maxSourceBytes)
	case len(s.InfoHashV2Source) > maxSourceBytes:
		return over("info_hash_v2_source", len(s.InfoHashV2Source), maxSourceBytes)
	case len(s.MetadataStatus) > maxClassBytes:
		return over("metadata_status", len(s.MetadataStatus), maxClassBytes)
	case len(s.LastFailure) > maxClassBytes:
		return over("last_failure", len(s.LastFailure), maxClassBytes)
	case len(s.LeaseID) > maxLeaseIDBytes:
		return over("lease_id", len(s.LeaseID), maxLeaseIDBytes)
	case len(s.Tier) > maxClassBytes:
		return over("tier", len(s.Tier), maxClassBytes)
	}
	for _, l := range []struct {
		name string
		list []string
		max  int
	}{{"avoid_peers", s.AvoidPeers, maxAvoid}, {"peers", s.Peers, schema.MaxStatePeers}} {
		if len(l.list) > l.max {
			return exitcode.BadInput(fmt.Errorf("%s: row %d: %s: %s of %d entries, over its bound of %d entries",
				path, n, schema.Hex(s.InfoHash), l.name, len(l.list), l.max))
		}
		for i, a := range l.list {
			if len(a) > schema.MaxPeerAddrBytes {
				return over(fmt.Sprintf("%s[%d]", l.name, i), len(a), schema.MaxPeerAddrBytes)
			}
		}
	}
	return nil
}

// checkPeerFields refuses row n of the other dataset's peers file path
// when its addr or class is over its bound.
func checkPeerFields(path string, n int64, p *schema.PeerPenalty) error {
	switch {
	case len(p.Addr) > schema.MaxPeerAddrBytes:
		return overBound(path, n, nil, "addr", len(p.Addr), schema.MaxPeerAddrBytes)
	case len(p.Class) > maxClassBytes:
		return overBound(path, n, nil, "class", len(p.Class), maxClassBytes)
	}
	return nil
}

// checkFileRows refuses a file of the other dataset that holds rows rows
// where its manifest says f.Rows (the manifest's counts are the totals).
func checkFileRows(path string, rows int64, f dataset.FileInfo) error {
	if rows != f.Rows {
		return fmt.Errorf("%s: %d rows, the manifest says %d", path, rows, f.Rows)
	}
	return nil
}

// readTheirState reads every state row of the other dataset's partition
// key within fromLimits, each file checked as readPartition checks it,
// then its row count and each row's values; the caller adds "merge
// --from: " (and, to an error that does not name the file, the
// dataset's folder: wrapped is false). The rows of a dataset of a format
// before dataset.RepairFormat come repaired (dataset.RepairV2Claim).
func (u *unioner) readTheirState(key string) (_ []schema.State, wrapped bool, _ error) {
	rows, wrapped, err := readTheir(u, dataset.TableState, key, func(df rowio.DataFile) ([]schema.State, error) {
		return statecol.ReadUntrustedStateFileWithin(df, fromLimits())
	}, checkStateFields)
	if err == nil && u.om.FormatVersion < dataset.RepairFormat {
		// An older dataset, read as it is, still has the damage fetch's
		// old v2 check did, which the union would bring back (the larger
		// bad_metadata, both avoid_peers, the later next_retry at a tie):
		// it is repaired as the migration would, at the run's clock.
		for i := range rows {
			dataset.RepairV2Claim(&rows[i], u.now)
		}
	}
	return rows, wrapped, err
}

// readTheirPeers reads the other dataset's peers table within
// fromLimits, as readTheirState reads its state.
func (u *unioner) readTheirPeers() (_ []schema.PeerPenalty, wrapped bool, _ error) {
	return readTheir(u, dataset.TablePeers, "", func(df rowio.DataFile) ([]schema.PeerPenalty, error) {
		return dataset.ReadFileWithin[schema.PeerPenalty](df, fromLimits())
	}, checkPeerFields)
}

// readTheir reads the rows of the other dataset's table partition key
// with read, then checks each file's row count and each row (check);
// see readTheirState.
func readTheir[T any](u *unioner, table, key string, read func(rowio.DataFile) ([]T, error),
	check func(path string, n int64, row *T) error) (_ []T, wrapped bool, _ error) {
	var out []T
	for _, f := range u.om.Table(table).Partitions[key] {
		df := u.od.SourceFile(u.om, table, key, f)
		rows, err := read(df)
		if err != nil {
			if cerr := capPageError(df.Path(), "", 0, err); cerr != err {
				return nil, true, cerr
			}
			return nil, false, err
		}
		if err := checkFileRows(df.Path(), int64(len(rows)), f); err != nil {
			return nil, true, err
		}
		for i := range rows {
			if err := check(df.Path(), int64(i)+1, &rows[i]); err != nil {
				return nil, true, err
			}
		}
		out = append(out, rows...)
	}
	return out, false, nil
}
