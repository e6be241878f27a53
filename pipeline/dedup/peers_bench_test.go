package dedup

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// peerObs is genObs(1, 1M, 200k) as capture writes it: every row has its
// sender's node_addr, and with announces, the announce_peer rows (a
// third) a peer_port.
func peerObs(announces bool) []schema.Observation {
	obs := genObs(1, 1_000_000, 200_000)
	for i := range obs {
		obs[i].NodeAddr = fmt.Sprintf("10.%d.%d.%d:6881", i%7, i/256%256, i%256)
		if announces && obs[i].Source == schema.SourceAnnouncePeer {
			obs[i].PeerPort = int32(1024 + i%60000)
		}
	}
	return obs
}

// BenchmarkReadPeers is BenchmarkReadInput on capture-like rows, without
// and with announced ports: what reading the peers costs.
func BenchmarkReadPeers(b *testing.B) {
	for _, announces := range []bool{false, true} {
		b.Run(fmt.Sprintf("announces=%v", announces), func(b *testing.B) {
			p := writeRows(b, filepath.Join(b.TempDir(), "obs.parquet"), peerObs(announces))
			in, err := probe(p, p, "")
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bt := newBatch(3600_000)
				if _, err := readInput(context.Background(), in, t0.UnixMilli(), bt); err != nil {
					b.Fatal(err)
				}
				bt.release()
			}
			b.ReportMetric(1e6*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// BenchmarkRunPeers is a whole dedup of those rows into a new dataset:
// reading, aggregating, and writing the state (peers column included).
func BenchmarkRunPeers(b *testing.B) {
	for _, announces := range []bool{false, true} {
		b.Run(fmt.Sprintf("announces=%v", announces), func(b *testing.B) {
			dir := b.TempDir()
			p := writeRows(b, filepath.Join(dir, "obs.parquet"), peerObs(announces))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := DefaultOptions()
				o.AnnouncedPeers = announces
				o.Data, o.Inputs, o.Now = filepath.Join(dir, fmt.Sprintf("ds%d", i)), []string{p}, t0.Add(2*3600e9)
				if _, err := Run(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
