package merge

import (
	"context"
	"crypto/sha1"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// benchOKResults writes n ok results of torrents with files files each
// and about pieceBytes of piece hashes, as fetch writes them.
func benchOKResults(b *testing.B, n, files, pieceBytes int) string {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	rs := make([]schema.Result, n)
	for i := range rs {
		info := fmt.Appendf(nil, "d5:filesl")
		for f := range files {
			p := fmt.Sprintf("file-%03d.bin", f)
			info = fmt.Appendf(info, "d6:lengthi%de4:pathl4:data%d:%see", rng.IntN(1<<30), len(p), p)
		}
		name := fmt.Sprintf("torrent %d", i)
		info = fmt.Appendf(info, "e4:name%d:%s12:piece lengthi262144e6:pieces%d:", len(name), name, pieceBytes)
		pieces := make([]byte, pieceBytes)
		for k := range pieces {
			pieces[k] = byte(rng.Uint32())
		}
		info = append(append(info, pieces...), 'e')
		m, err := infodict.Parse(info)
		if err != nil {
			b.Fatal(err)
		}
		rs[i] = schema.Result{InfoHash: sha1.Sum(info), HashType: schema.HashV1, Outcome: schema.OutcomeOK,
			AttemptedAt: t0, ServedBy: "127.0.0.1:6881", MetadataSize: int64(len(info)), PeerFailures: []schema.PeerFailure{}, ResultMeta: schema.OKMeta(m)}
	}
	path := filepath.Join(b.TempDir(), "results.parquet")
	w, err := rowio.Create[schema.Result](path, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Write(rs); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkMergeOKResults merges 3000 fetched torrents (20 files and 8 KB
// of piece hashes each, ~9 KB info dictionaries) into an empty dataset:
// the cost of deriving their metadata columns from info_bytes.
func BenchmarkMergeOKResults(b *testing.B) {
	in := benchOKResults(b, 3000, 20, 8000)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		if _, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		o := DefaultOptions()
		o.Data, o.Now, o.Inputs = dir, tm(t0+minute), []string{in}
		if st, err := Run(context.Background(), o); err != nil || st.Stored != 3000 {
			b.Fatalf("stored %d, err %v", st.Stored, err)
		}
	}
}

// BenchmarkReadOKResults reads the same results file as
// BenchmarkMergeOKResults, and nothing else: what deriving costs.
func BenchmarkReadOKResults(b *testing.B) {
	in := input{name: "results.parquet", path: benchOKResults(b, 3000, 20, 8000)}
	b.ResetTimer()
	for range b.N {
		rs, _, err := readResults(in, nil)
		if err != nil || len(rs) != 3000 {
			b.Fatalf("%d rows, err %v", len(rs), err)
		}
	}
}
