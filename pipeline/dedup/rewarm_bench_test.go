package dedup

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkColdTouch: a batch that sees hashes of every partition's cold
// file, on a stategen-like state (hot rows over two files, failed and
// cold hashes): each partition is compacted into one hot and one cold
// file, rewarming the cold hashes seen. One op is one dedup run on a
// fresh copy of the state (the copy is not timed).
func BenchmarkColdTouch(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	obs := coldState(b, src, 8, 40000, 2, t0.Add(time.Hour).UnixMilli())
	in := writeObs(b, dir, obs)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		data := filepath.Join(dir, "run")
		if err := os.RemoveAll(data); err != nil {
			b.Fatal(err)
		}
		if err := os.CopyFS(data, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		o := DefaultOptions()
		o.Data, o.Inputs, o.Now = data, []string{in}, t0.Add(2*time.Hour)
		rewarmOpts(&o)
		st, err := Run(b.Context(), o)
		if err != nil {
			b.Fatal(err)
		}
		if st.Rewarmed == 0 {
			b.Fatal("the batch rewarmed nothing")
		}
	}
}
