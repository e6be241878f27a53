package statecol_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

func sample(n int) []schema.State {
	out := make([]schema.State, n)
	for i := range out {
		st := schema.State{HashType: schema.HashV1, FirstSeen: int64(i), LastSeen: int64(2 * i), SeenCount: int64(i % 7),
			LastSource: []string{schema.SourceGetPeers, schema.SourceAnnouncePeer, schema.SourceImport}[i%3],
			Activity:   float64(i) / 3, MetadataStatus: []string{schema.StatusNew, schema.StatusFailed, schema.StatusFetched}[i%3],
			Attempts: int32(i % 5), Tier: []string{schema.TierHot, schema.TierCold}[i%2], BackoffStep: int32(i % 6), BadMetadata: int32(i % 2)}
		st.InfoHash[0], st.InfoHash[1], st.InfoHash[19] = byte(i>>8), byte(i), 0xab
		if i%3 == 1 {
			st.LastAttempt, st.NextRetry, st.LastFailure = int64(1000+i), int64(5000+i), "no_peers"
		}
		if i%10 == 0 {
			st.InfoHashV2 = []byte{byte(i), 1, 2}
			st.HashType = schema.HashV2
		}
		if i%11 == 0 {
			st.LeaseID, st.LeaseUntil = "L"+string(rune('a'+i%26)), int64(9000+i)
		}
		if i%4 == 0 {
			st.Reactivated = int64(77 + i)
		}
		if i%6 == 0 {
			st.AvoidPeers = []string{"127.0.0.1:1", "127.0.0.1:" + string(rune('0'+i%10))}
		}
		if i%5 == 0 {
			st.Peers = []string{"10.0.0.1:" + string(rune('1'+i%9)), "[::1]:6881"}
		}
		if i%3 > 0 {
			st.FirstSource = schema.SourceSampleInfohashes
		}
		if st.LastFailure != "" && i%2 == 0 {
			st.LastFailureAt = int64(3000 + i)
		}
		if len(st.Peers) > 0 && i%3 != 1 {
			st.PeersAt = int64(4000 + i)
		}
		if st.InfoHashV2 != nil && i%4 != 1 {
			st.InfoHashV2Source = schema.SourceImport
		}
		out[i] = st
	}
	return out
}

// TestReadStateMatchesRowReader writes states with the writers infohash
// uses (several row groups and pages, nulls, dictionaries, lists) and
// checks that the column reader returns exactly what parquet-go's row
// reader does.
func TestReadStateMatchesRowReader(t *testing.T) {
	rows := sample(20000)
	for _, name := range []string{"rowio", "small-groups"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.parquet")
			if name == "rowio" {
				w, err := rowio.Create[schema.State](path, nil)
				if err != nil {
					t.Fatal(err)
				}
				w.Write(rows)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				w, err := rowio.Create[schema.State](path, nil, parquet.MaxRowsPerRowGroup(3000), parquet.PageBufferSize(4096))
				if err != nil {
					t.Fatal(err)
				}
				w.Write(rows)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			want, err := dataset.ReadFile[schema.State](path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := statecol.ReadStateFile(rowio.UnrecordedFile(path))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for i := range want {
				w, g := want[i], got[i]
				if len(w.InfoHashV2) == 0 && len(g.InfoHashV2) == 0 {
					w.InfoHashV2, g.InfoHashV2 = nil, nil
				}
				if len(w.AvoidPeers) == 0 && len(g.AvoidPeers) == 0 {
					w.AvoidPeers, g.AvoidPeers = nil, nil
				}
				if len(w.Peers) == 0 && len(g.Peers) == 0 {
					w.Peers, g.Peers = nil, nil
				}
				if !reflect.DeepEqual(w, g) {
					t.Fatalf("row %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

func BenchmarkReadState(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.parquet")
	w, _ := rowio.Create[schema.State](path, nil)
	rows := sample(400000)
	w.Write(rows)
	w.Close()
	b.Run("columns", func(b *testing.B) {
		for b.Loop() {
			if err := statecol.ReadState(rowio.UnrecordedFile(path), func([]schema.State) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
	})
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			if _, err := dataset.ReadFile[schema.State](path); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
	})
}
