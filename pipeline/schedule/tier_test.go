package schedule

import "testing"

func TestColdWindowCoversEveryPrefix(t *testing.T) {
	tests := []struct {
		name  string
		width int
	}{
		{"default", Default().Plan.ColdPartitions},
		{"one", 1},
		{"not a divisor of 256", 48},
		{"all", 256},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Default()
			p.Plan.ColdPartitions = tt.width
			passes := (256 + tt.width - 1) / tt.width
			seen := map[int]int{}
			cursor := int64(0)
			for pass := range passes {
				n := 0
				for pre := range 256 {
					if InColdWindow(p, byte(pre), cursor) {
						seen[pre]++
						n++
					}
				}
				if n != tt.width {
					t.Fatalf("pass %d: window holds %d partitions, want %d", pass, n, tt.width)
				}
				cursor = NextColdCursor(p, cursor)
			}
			if len(seen) != 256 {
				t.Fatalf("%d passes read the cold files of %d partitions, want all 256", passes, len(seen))
			}
			if cursor < 0 || cursor > 255 {
				t.Fatalf("cursor %d left 0..255", cursor)
			}
		})
	}
}

func TestColdWindowIgnoresTheClock(t *testing.T) {
	// A pass's window depends only on the cursor it is handed: daily
	// passes at the same hour used to read the same 16 partitions.
	p := Default()
	a, b := map[int]bool{}, map[int]bool{}
	for pre := range 256 {
		a[pre] = InColdWindow(p, byte(pre), 0)
		b[pre] = InColdWindow(p, byte(pre), NextColdCursor(p, 0))
	}
	for pre := range 256 {
		if a[pre] && b[pre] {
			t.Fatalf("consecutive passes both read partition %02x", pre)
		}
	}
}

func TestColdFileName(t *testing.T) {
	n := ColdFileName()
	if !IsColdFile(n) || IsColdFile("part-0123.parquet") || n == ColdFileName() {
		t.Fatalf("cold file names: %q", n)
	}
}
