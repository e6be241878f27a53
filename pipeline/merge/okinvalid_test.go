package merge

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"log/slog"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestOKRowsFetchWouldRefuse: an ok row whose info_bytes hash to its
// infohash but are no valid info dictionary of its hash_type (a v1
// dictionary under a v2 hash, as a fetch before it checked versions
// wrote; a dictionary BEP 3 makes invalid, as a fetch before it checked
// that wrote; none at all, by hand) is stored as the failed
// invalid_metadata attempt fetch writes for those bytes today, its detail
// naming the problem: no torrent row, the hash failed, not fetched. The
// file's other rows are applied, an ok row of either version stored, and
// merge warns once for the input. merge stored them all ok before (but
// the dictionary without files, which refused the whole file).
func TestOKRowsFetchWouldRefuse(t *testing.T) {
	v1Info, _ := torrentInfo("v1")
	v2Info := v2TorrentInfo("v2")
	v2Of := func(info []byte) schema.Hash { s := sha256.Sum256(info); return schema.Hash(s[:20]) }
	for _, tt := range []struct {
		name string
		info []byte
		typ  int8
		want string // in the detail; "" for stored ok
	}{
		{"v1 under its SHA-1", v1Info, schema.HashV1, ""},
		{"v2 under its SHA-256", v2Info, schema.HashV2, ""},
		{"v1 under its SHA-256", v1Info, schema.HashV2, "no meta version: a v1 info dictionary"},
		{"v2-only under its SHA-1", v2Info, schema.HashV1, "no length or files: a v2-only (BEP 52) info dictionary"},
		{"a file without length", []byte("d5:filesld4:pathl1:aeee4:name1:d12:piece lengthi16384ee"), schema.HashV1, "file 0 has no length"},
		{"no files", []byte("d4:name1:xe"), schema.HashV1, "no length, files or file tree"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := schema.Hash(sha1.Sum(tt.info))
			if tt.typ == schema.HashV2 {
				h = v2Of(tt.info)
			}
			other := hashAt(0x77, 1) // a failure in the same file, applied as ever
			st := newHash(h, t0)
			st.HashType = tt.typ
			dir := makeDataset(t, []schema.State{st, newHash(other, t0)})
			var rows []schema.Result
			for _, j := range planJobs(t, dir, t0, 2) {
				if j.InfoHash == other {
					rows = append(rows, failure(j, schema.OutcomeNoPeers, t0+minute))
					continue
				}
				r := success(j, tt.info, t0+minute)
				r.HashType = tt.typ
				rows = append(rows, r)
			}
			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
			stats := runMerge(t, dir, t0+2*minute, writeResults(t, rows))
			states := stateOf(t, dir)
			tor := readTable[schema.Torrent](t, dir, dataset.TableTorrents)
			warned := bytes.Count(log.Bytes(), []byte("stored as invalid_metadata"))
			if states[other].LastFailure != schema.OutcomeNoPeers {
				t.Errorf("the other row's hash: last_failure %q, want no_peers", states[other].LastFailure)
			}
			if tt.want == "" {
				if states[h].MetadataStatus != schema.StatusFetched || len(tor) != 1 || stats.Stored != 1 || warned != 0 {
					t.Fatalf("status %s, %d torrents, %d stored, %d warnings; want fetched, one stored, no warning:\n%s",
						states[h].MetadataStatus, len(tor), stats.Stored, warned, log.String())
				}
				return
			}
			if s := states[h]; s.MetadataStatus != schema.StatusFailed || s.LastFailure != schema.OutcomeInvalidMetadata || s.Attempts != 1 {
				t.Errorf("state %s, last_failure %q, %d attempts; want failed, invalid_metadata, 1", s.MetadataStatus, s.LastFailure, s.Attempts)
			}
			if len(tor) != 0 || stats.Stored != 0 || stats.Applied != 2 {
				t.Errorf("%d torrents, %d stored, %d failures applied; want none stored, both failures applied", len(tor), stats.Stored, stats.Applied)
			}
			if warned != 1 || !strings.Contains(log.String(), "rows=1") || !strings.Contains(log.String(), tt.want) {
				t.Errorf("%d warnings, want one of 1 row naming %q:\n%s", warned, tt.want, log.String())
			}
		})
	}
}
