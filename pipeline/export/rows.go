package export

import (
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// stateSource reads state partitions with readState, decoding partition
// after partition into the same memory: every sink has copied or written
// a partition's rows before the next is read, and fresh memory for each
// cost more (page faults, and the collector clearing and scanning it)
// than decoding.
//
// A row's lease_id and lease_until, always null in the state's files
// (leases have a table of their own), are taken from ls, the snapshot's
// leases table: the hash's lease as that table holds it, live or ended
// (lease_until says which), or null when it has none. Left null, they
// read as if nothing were leased.
func stateSource(ls leases.Set) rowSource[schema.State] {
	var buf []schema.State
	return func(d *dataset.Dataset, m *dataset.Manifest, key string) ([]schema.State, error) {
		rows, err := readState(d, m, key, buf)
		if cap(rows) > cap(buf) {
			buf = rows[:0]
		}
		for i := range rows {
			l := ls[rows[i].InfoHash] // the zero Lease (nulls) when none
			rows[i].LeaseID, rows[i].LeaseUntil = l.LeaseID, l.LeaseUntil
		}
		return rows, err
	}
}

// readState reads a state partition, file after file, into buf's memory
// when it is large enough, with statecol's column reader: parquet-go's
// row reader was 62% of a Parquet export of the state. Empty optional
// lists and v2 hashes come back nil, as the row reader gave them, so that
// text formats render them as nulls.
func readState(d *dataset.Dataset, m *dataset.Manifest, key string, buf []schema.State) ([]schema.State, error) {
	t := m.Table(dataset.TableState)
	out := buf[:0] // an older format is read as it is: DataFile says which columns it lacks
	for i, f := range t.Partitions[key] {
		if i == 0 {
			rows, err := statecol.ReadStateFileInto(d.DataFile(m, dataset.TableState, key, f), buf)
			if err != nil {
				return nil, err
			}
			out = rows
			continue
		}
		rows, err := statecol.ReadStateFile(d.DataFile(m, dataset.TableState, key, f))
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	for i := range out {
		if len(out[i].InfoHashV2) == 0 {
			out[i].InfoHashV2 = nil
		}
		if len(out[i].AvoidPeers) == 0 {
			out[i].AvoidPeers = nil
		}
		if len(out[i].Peers) == 0 {
			out[i].Peers = nil
		}
	}
	return out, nil
}

// torrentRows reads a torrents partition. Every row is a fetched
// torrent, whose metadata is known whole: the nulls that files written
// before infohash told zero from unknown hold for an empty name, a size
// or file count of 0, read as those zeros (Meta.KnownZeros).
func torrentRows(d *dataset.Dataset, m *dataset.Manifest, key string) ([]schema.Torrent, error) {
	rows, err := dataset.ReadPartition[schema.Torrent](d, m.Table(dataset.TableTorrents), key)
	for i := range rows {
		rows[i].KnownZeros()
	}
	return rows, err
}

// catalogSource joins a state partition with the same torrents
// partition, reusing its state and catalog rows' memory partition after
// partition as stateSource does (every catalog row is built whole).
func catalogSource() rowSource[schema.Catalog] {
	var sts []schema.State
	var out []schema.Catalog
	return func(d *dataset.Dataset, m *dataset.Manifest, key string) ([]schema.Catalog, error) {
		rows, err := readState(d, m, key, sts)
		if err != nil {
			return nil, err
		}
		if cap(rows) > cap(sts) {
			sts = rows[:0]
		}
		var meta map[schema.Hash]*schema.Torrent
		if _, ok := m.Table(dataset.TableTorrents).Partitions[key]; ok {
			ts, err := torrentRows(d, m, key)
			if err != nil {
				return nil, err
			}
			meta = make(map[schema.Hash]*schema.Torrent, len(ts))
			for i := range ts {
				meta[ts[i].InfoHash] = &ts[i]
			}
		}
		out = slices.Grow(out[:0], len(rows))[:len(rows)]
		for i := range rows {
			s := &rows[i]
			c := schema.Catalog{
				InfoHash: s.InfoHash, InfoHashV2: s.InfoHashV2, HashType: s.HashType,
				FirstSeen: s.FirstSeen, LastSeen: s.LastSeen, SeenCount: s.SeenCount, LastSource: s.LastSource,
				Activity: s.Activity, MetadataStatus: s.MetadataStatus, Attempts: s.Attempts,
				LastAttempt: s.LastAttempt, LastFailure: s.LastFailure, NextRetry: s.NextRetry, Tier: s.Tier,
				FirstSource: s.FirstSource, LastFailureAt: s.LastFailureAt, InfoHashV2Source: s.InfoHashV2Source,
			}
			if t := meta[s.InfoHash]; t != nil {
				c.FetchedAt, c.ServedBy, c.MetadataSize = t.FetchedAt, t.ServedBy, t.MetadataSize
				c.Name, c.NameRaw, c.NameUTF8Valid = t.Name, t.NameRaw, &t.NameUTF8Valid
				c.TotalSize, c.PieceLength, c.FileCount, c.Files, c.Private = t.TotalSize, t.PieceLength, t.FileCount, t.Files, &t.Private
				if c.Files == nil {
					c.Files = []schema.File{} // known: no files (null is for hashes not fetched)
				}
			}
			out[i] = c
		}
		return out, nil
	}
}
