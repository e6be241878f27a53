package schedule

import "testing"

func TestColdWindowCoversEveryPrefix(t *testing.T) {
	p := Default()
	seen := map[int]int{}
	for h := range int64(16) {
		n := 0
		for pre := range 256 {
			if InColdWindow(p, byte(pre), t0+h*hour+17*minute) {
				seen[pre]++
				n++
			}
		}
		if n != p.Plan.ColdPartitions {
			t.Fatalf("hour %d: window holds %d partitions, want %d", h, n, p.Plan.ColdPartitions)
		}
	}
	if len(seen) != 256 {
		t.Fatalf("16 hourly passes read the cold files of %d partitions, want all 256", len(seen))
	}
	p.Plan.ColdPartitions = 256
	if !InColdWindow(p, 200, t0) {
		t.Errorf("a full window skipped a partition")
	}
}

func TestColdFileName(t *testing.T) {
	n := ColdFileName()
	if !IsColdFile(n) || IsColdFile("part-0123.parquet") || n == ColdFileName() {
		t.Fatalf("cold file names: %q", n)
	}
}
